/*
 * bench/bench_eal.c: EAL start-up and hugepage reservation for benchmarks (see bench_eal.h).
 */
#include "bench_eal.h"

#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

#if RF_HAVE_DPDK /* optional (RF_WITH_DPDK): without it the EAL "fails" with that reason */
#include <rte_eal.h>
#include <rte_errno.h>
#endif

#define NR_2M "/proc/sys/vm/nr_hugepages"
#define FREE_2M "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"

#if RF_HAVE_DPDK
static int eal_state = -2; /* -2 not tried, else the first answer */
static char eal_why[160];
#endif

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int rc = fprintf(f, "%ld\n", v) > 0 ? 0 : -1;
	return fclose(f) == 0 ? rc : -1;
}

long rf_bench_hugepages_reserve(long pages)
{
	long free_now = read_long(FREE_2M);
	if (free_now >= pages)
		return 0;
	if (geteuid() != 0 || free_now < 0)
		return -1;
	long nr = read_long(NR_2M), want = pages - free_now;
	if (nr < 0 || write_long(NR_2M, nr + want) != 0)
		return -1;
	long added = read_long(NR_2M) - nr;
	if (added < want) {
		rf_bench_hugepages_release(added);
		return -1;
	}
	return added;
}

void rf_bench_hugepages_release(long added)
{
	if (added > 0)
		write_long(NR_2M, read_long(NR_2M) - added);
}

#if !RF_HAVE_DPDK
int rf_bench_eal_start(unsigned cpu, bool want_huge, char *why, size_t len)
{
	(void)cpu;
	(void)want_huge;
	snprintf(why, len, "built without DPDK (RF_WITH_DPDK)");
	return -1;
}
#else
/* Removes this process's EAL runtime directory (/var/run/dpdk/<file-prefix>, or under
 * XDG_RUNTIME_DIR as a user) and the files in it: rte_eal_cleanup leaves them, and so does a
 * failed rte_eal_init. */
static void remove_runtime_dir(const char *dir)
{
	if (!dir || !*dir)
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[512];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

int rf_bench_eal_start(unsigned cpu, bool want_huge, char *why, size_t len)
{
	if (eal_state != -2) {
		snprintf(why, len, "%s", eal_why);
		return eal_state;
	}
	char lcores[32], prefix[64];
	snprintf(lcores, sizeof(lcores), "%u", cpu);
	snprintf(prefix, sizeof(prefix), "--file-prefix=rfbench_%d", (int)getpid());
	long free_pages = read_long(FREE_2M);
	bool huge = want_huge && free_pages >= 64;
	char *huge_argv[] = {"ringflow-bench", "-l", lcores, "--no-pci", "--in-memory", prefix,
			     "--log-level=4", "-m", "128", NULL};
	char *nohuge_argv[] = {"ringflow-bench", "-l", lcores, "--no-pci", "--no-huge",
			       "--no-shconf", prefix, "--log-level=4", "-m", "256", NULL};
	char **argv = huge ? huge_argv : nohuge_argv;
	int argc = 0;
	while (argv[argc])
		argc++;
	if (rte_eal_init(argc, argv) < 0) {
		snprintf(eal_why, sizeof(eal_why), "rte_eal_init (%s) failed: %s",
			 huge ? "hugepages" : "--no-huge", rte_strerror(rte_errno));
		rf_bench_eal_remove_dir();
		eal_state = -1;
	} else {
		snprintf(eal_why, sizeof(eal_why), "EAL on %s%s",
			 huge ? "2 MiB hugepages (--in-memory)" : "4 KiB pages (--no-huge)",
			 want_huge && !huge ? ": fewer than 64 hugepages free at EAL start" : "");
		eal_state = huge ? 1 : 0;
	}
	snprintf(why, len, "%s", eal_why);
	return eal_state;
}

void rf_bench_eal_remove_dir(void)
{
	remove_runtime_dir(rte_eal_get_runtime_dir());
}

void rf_bench_eal_stop(void)
{
	char dir[256];
	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	remove_runtime_dir(dir);
}
#endif
