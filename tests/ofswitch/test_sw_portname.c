/*
 * tests/ofswitch/test_sw_portname.c: the ports' names in the stats registry are valid
 * registry names and distinct, whatever the --port specs (issue 25: a DPDK PCI address made
 * --metrics fail). Each name is registered in a real registry, as --metrics does (it
 * refuses a name outside [A-Za-z0-9_.-]).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include <ringflow/stats.h>

#include "sw.h"

static _Atomic uint64_t gauge;

static void check(const char *const *in, unsigned n, const char *const *want)
{
	static struct sw_port ports[SW_MAX_PORTS];
	char names[SW_MAX_PORTS][SW_STATS_NAME];
	memset(ports, 0, sizeof(ports));
	for (unsigned i = 0; i < n; i++) {
		snprintf(ports[i].name, sizeof(ports[i].name), "%s", in[i]);
		ports[i].of_no = i + 1;
	}
	sw_port_stats_names(ports, n, names);
	struct rf_stats *reg = rf_stats_create("switch");
	cr_assert(reg);
	for (unsigned i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		cr_assert(len > 0 && len < SW_STATS_NAME);
		cr_assert_eq(strspn(names[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789_-."), len, "port %u: '%s'", i + 1, names[i]);
		if (want)
			cr_assert_str_eq(names[i], want[i]);
		for (unsigned j = 0; j < i; j++)
			cr_assert_str_neq(names[i], names[j], "ports %u and %u share a name", j + 1, i + 1);
		cr_assert_eq(rf_stats_add_gauge(reg, names[i], NULL, &gauge), 0, "'%s' refused", names[i]);
	}
	rf_stats_destroy(reg);
}

Test(sw_portname, pci_address_becomes_a_valid_name)
{
	const char *in[] = {"0000:03:00.0", "0000:03:00.1", "veth1"};
	const char *want[] = {"0000_03_00.0", "0000_03_00.1", "veth1"};
	check(in, 3, want);
}

Test(sw_portname, specs_without_dev_and_clashes_stay_distinct)
{
	/* a spec without dev= gives its first 15 characters: two vdevs look alike */
	const char *in[] = {"dpdk:vdev=net_a", "dpdk:vdev=net_a", "", "a:b", "a_b-2", "a b\tc",
			    "a_b"};
	const char *want[] = {"dpdk_vdev_net_a", "dpdk_vdev_net_a-2", "port3", "a_b", "a_b-2",
			      "a_b_c", "a_b-7"};
	check(in, 7, want);
}
