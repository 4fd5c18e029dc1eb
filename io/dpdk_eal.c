/*
 * io/dpdk_eal.c: the DPDK driver's EAL (see dpdk.c's file comment, "EAL: the app decides"):
 * started by rf_io_driver_init("dpdk", argc, argv) with the app's arguments, or by the first
 * open with defaults (no PCI, a unique file prefix, lcore 0 on the caller's CPU set,
 * hugepages when enough are free, else --no-huge, said aloud), its runtime directory removed
 * right after init; rte_eal_cleanup once, by rf_io_driver_fini("dpdk") when no device is open.
 */
#include "io/dpdk_pvt.h"

/* EAL state of the process: 0 never started, 1 ours, 3 the app's own, 2 cleaned up or
 * failed (DPDK cannot start it again). Open/close/init/fini take rf_dpdk_lock. */
static int eal_state;
static char eal_runtime_dir[256];
pthread_mutex_t rf_dpdk_lock = PTHREAD_MUTEX_INITIALIZER;
unsigned rf_dpdk_ndevs; /* dpdk devices open */

/* ---- EAL ------------------------------------------------------------------------------- */

static unsigned free_hugepages_2m(void)
{
	long n = rf_io_read_long("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");
	return n > 0 ? (unsigned)n : 0;
}

/* Remove the EAL's runtime directory (one level of files), which rte_eal_cleanup leaves. */
static void remove_runtime_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* After an EAL init that writes no files (--no-shconf / --in-memory, --no-telemetry), its
 * runtime directory is empty: remove it now, so even a killed process leaves nothing in
 * /var/run/dpdk. With the app's own arguments the EAL may use it: leave it until fini. */
static void eal_started(int state)
{
	snprintf(eal_runtime_dir, sizeof(eal_runtime_dir), "%s", rte_eal_get_runtime_dir());
	if (state == 1)
		remove_runtime_dir(eal_runtime_dir);
	eal_state = state;
}

static int eal_fail(int e, char *err, size_t len)
{
	eal_state = 2; /* a failed rte_eal_init cannot be retried either */
	if (e == EACCES || e == EPERM)
		return rf_io_err(err, len, "dpdk: EAL init refused (%s): run as root (or with "
				 "CAP_NET_RAW, CAP_IPC_LOCK, CAP_SYS_ADMIN)", rte_strerror(e));
	return rf_io_err(err, len, "dpdk: EAL init failed: %s", rte_strerror(e));
}

/* "0@(0,1)": lcore 0 on every CPU this thread may run on, so rte_eal_init leaves the
 * thread's affinity as the app set it. */
static void lcores_arg(char *buf, size_t len)
{
	cpu_set_t cs;
	size_t o = (size_t)snprintf(buf, len, "--lcores=0@(");
	bool first = true;
	if (sched_getaffinity(0, sizeof(cs), &cs) != 0) {
		snprintf(buf, len, "--lcores=0");
		return;
	}
	for (int c = 0; c < CPU_SETSIZE && o + 8 < len; c++)
		if (CPU_ISSET(c, &cs)) {
			o += (size_t)snprintf(buf + o, len - o, "%s%d", first ? "" : ",", c);
			first = false;
		}
	snprintf(buf + o, len - o, ")");
}

/* The first open without rf_io_driver_init: ringflow's defaults (see the top). Lock held. */
int rf_dpdk_eal_start(char *err, size_t len)
{
	char prefix[32], lcores[512];
	char *argv[16];
	int argc = 0, rc;
	bool huge = free_hugepages_2m() >= 256 / 2; /* 256 MiB of 2 MiB pages */

	if (eal_state == 2)
		return rf_io_err(err, len, "dpdk: the EAL failed to start or was cleaned up earlier "
				 "in this process and cannot be started again: restart the process");
	if (eal_state != 0)
		return 0;
	if (rte_lcore_count() > 0) { /* the app started the EAL itself: use that one */
		eal_started(3);
		return 0;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=rf%d", (int)getpid());
	lcores_arg(lcores, sizeof(lcores));
	argv[argc++] = "ringflow";
	argv[argc++] = lcores;
	argv[argc++] = "--no-pci";
	argv[argc++] = prefix;
	argv[argc++] = "--log-level=*:warning";
	argv[argc++] = "--no-telemetry";
	if (huge) {
		argv[argc++] = "--in-memory"; /* hugepages through memfd: no hugetlbfs mount */
	} else {
		argv[argc++] = "--no-huge";
		argv[argc++] = "-m";
		argv[argc++] = DPDK_NO_HUGE_MB;
		argv[argc++] = "--no-shconf";
		rf_log(RF_LOG_WARN, "dpdk: fewer than 128 free 2 MiB hugepages: EAL on normal pages "
			"(--no-huge -m %s; reserve pages in /proc/sys/vm/nr_hugepages for hugepages)",
			DPDK_NO_HUGE_MB);
	}
	argv[argc] = NULL;
	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		if (rte_errno == EALREADY) { /* the app started it itself: use that one */
			eal_started(3);
			return 0;
		}
		return eal_fail(rte_errno, err, len);
	}
	eal_started(1);
	return 0;
}

/* rf_io_driver_init("dpdk", argc, argv): the EAL with the app's own arguments. */
int rf_dpdk_init(int argc, char **argv, char *err, size_t len)
{
	int rc = 0;
	pthread_mutex_lock(&rf_dpdk_lock);
	if (eal_state != 0 || rte_lcore_count() > 0) {
		rc = -EALREADY;
		rf_io_err(err, len, "dpdk: the EAL is %s already: call rf_io_driver_init before the "
			  "first dpdk open, once", eal_state == 2 ? "cleaned up" : "running");
	} else if (rte_eal_init(argc, argv) < 0) {
		if (rte_errno == EALREADY) {
			eal_started(3);
		} else {
			int e = rte_errno;
			rc = eal_fail(e, err, len) ? -e : 0;
		}
	} else {
		eal_started(3); /* the app's arguments: its files are its own until fini */
	}
	pthread_mutex_unlock(&rf_dpdk_lock);
	return rc;
}

/* rf_io_driver_fini("dpdk"): rte_eal_cleanup once no device is open (DPDK allows it once). */
void rf_dpdk_fini(void)
{
	pthread_mutex_lock(&rf_dpdk_lock);
	if ((eal_state == 1 || eal_state == 3) && rf_dpdk_ndevs == 0) {
		rte_eal_cleanup();
		remove_runtime_dir(eal_runtime_dir);
		eal_state = 2;
	}
	pthread_mutex_unlock(&rf_dpdk_lock);
}

