/*
 * apps/ofswitch/sw_portname.c: the names the ports get in the stats registry (--metrics, the
 * control socket). A port's name comes from its --port spec (the dev= value, or the spec's
 * start), and the registry takes only [A-Za-z0-9_.-] (rf_stats_name_ok): a DPDK PCI address
 * (dev=0000:03:00.0) or a spec without dev= made --metrics refuse to start. So every other
 * character becomes '_', and a name an earlier port already has gets "-<OpenFlow number>".
 * The OpenFlow port name (PORT_DESC) stays as given.
 */
#include <stdio.h>
#include <string.h>

#include "sw.h"

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.';
}

void sw_port_stats_names(const struct sw_port *ports, unsigned n, char names[][SW_STATS_NAME])
{
	for (unsigned i = 0; i < n; i++) {
		char *s = names[i];
		size_t len = strnlen(ports[i].name, sizeof(ports[i].name));
		for (size_t j = 0; j < len; j++)
			s[j] = name_char(ports[i].name[j]) ? ports[i].name[j] : '_';
		s[len] = '\0';
		if (len == 0)
			snprintf(s, SW_STATS_NAME, "port%u", ports[i].of_no);
		/* A clash gets the number; the longer name is checked again (bounded: only
		 * names chosen to clash on purpose take more than one round). */
		for (unsigned j = 0, round = 0; j < i; j++)
			if (strcmp(names[j], s) == 0 && round++ < SW_MAX_PORTS) {
				char base[SW_STATS_NAME];
				memcpy(base, s, sizeof(base));
				snprintf(s, SW_STATS_NAME, "%.24s-%u", base, ports[i].of_no);
				j = (unsigned)-1; /* from the first port again */
			}
	}
}
