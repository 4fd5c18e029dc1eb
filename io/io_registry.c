/*
 * io/io_registry.c: the driver registry. The one idea: the core never knows a driver by name.
 * Every built-in driver is listed once in rf_io_builtin[]; on first use each one's probe()
 * decides whether it is usable here, and an unusable driver is kept apart with its reason so
 * that an error can say why it is absent (rf_io_describe, rf_io_print_usage, and rf_io_open's
 * errors through rf_io_absent_reason). Apps and out-of-tree drivers add theirs with
 * rf_io_register; a struct rf_io_ops of another version or size is refused with one line.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <ringflow/common.h>
#include <ringflow/io.h>
#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#include "io_pvt.h"

/* Built-in drivers, in the order `available:` lists them. One slot per helper's drivers. */
static const struct rf_io_ops *const rf_io_builtin[] = {
	/* sockets (runtime) */
	&rf_io_udp_ops,
	&rf_io_tcp_ops,

	/* io_uring (echo-bench): add &rf_io_uring_ops below this line */
	&rf_io_uring_ops,

	/* AF_XDP, DPDK (bypass): add &rf_io_xdp_ops, &rf_io_dpdk_ops below this line */
	&rf_io_xdp_ops,
	&rf_io_dpdk_ops,

	/* AF_PACKET (frame mode): add &rf_io_packet_ops below this line */
	&rf_io_packet_ops,

	NULL, /* end */
};

#define RF_IO_REG_MAX 32

static struct {
	pthread_mutex_t lock;
	unsigned n, nabsent;
	const struct rf_io_ops *ops[RF_IO_REG_MAX];
	struct {
		char name[RF_IO_NAME_MAX];
		char why[RF_IO_WHY_MAX];
	} absent[RF_IO_REG_MAX];
} reg = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static int register_locked(const struct rf_io_ops *ops)
{
	if (ops && (ops->abi_version != RF_IO_OPS_VERSION || ops->size != sizeof(*ops))) {
		/* Only the first two members sit where every version puts them: trust name only
		 * when the version matches (then just the size is off). */
		const char *who = ops->abi_version == RF_IO_OPS_VERSION && ops->name ? ops->name
										: "(name unknown)";
		rf_log(RF_LOG_ERR, "io: refusing driver %s: built for struct rf_io_ops version %u "
		       "(%u bytes), this library has version %u (%zu bytes); rebuild the driver "
		       "against this ringflow's ringflow/io_driver.h",
		       who, ops->abi_version, ops->size, RF_IO_OPS_VERSION, sizeof(*ops));
		return -EPROTO;
	}
	if (!ops || !ops->name || !ops->open || !ops->rx_burst || !ops->tx_burst || !ops->close ||
	    strlen(ops->name) >= RF_IO_NAME_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < reg.n; i++)
		if (strcmp(reg.ops[i]->name, ops->name) == 0)
			return -EEXIST;
	for (unsigned i = 0; i < reg.nabsent; i++)
		if (strcmp(reg.absent[i].name, ops->name) == 0)
			return -EEXIST;
	char why[RF_IO_WHY_MAX] = "";
	int rc = ops->probe ? ops->probe(why, sizeof(why)) : 0;
	if (rc == 0) {
		if (reg.n == RF_IO_REG_MAX)
			return -ENOSPC;
		reg.ops[reg.n++] = ops;
		return 0;
	}
	if (reg.nabsent == RF_IO_REG_MAX)
		return -ENOSPC;
	snprintf(reg.absent[reg.nabsent].name, RF_IO_NAME_MAX, "%s", ops->name);
	snprintf(reg.absent[reg.nabsent].why, RF_IO_WHY_MAX, "%s",
		 why[0] ? why : strerror(-rc));
	reg.nabsent++;
	return 0;
}

static void register_builtins(void)
{
	pthread_mutex_lock(&reg.lock);
	for (size_t i = 0; rf_io_builtin[i]; i++)
		register_locked(rf_io_builtin[i]);
	pthread_mutex_unlock(&reg.lock);
}

int rf_io_register(const struct rf_io_ops *ops)
{
	pthread_once(&reg_once, register_builtins);
	pthread_mutex_lock(&reg.lock);
	int rc = register_locked(ops);
	pthread_mutex_unlock(&reg.lock);
	return rc;
}

const struct rf_io_ops *rf_io_find(const char *name)
{
	const struct rf_io_ops *found = NULL;
	pthread_once(&reg_once, register_builtins);
	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < reg.n && name; i++)
		if (strcmp(reg.ops[i]->name, name) == 0)
			found = reg.ops[i];
	pthread_mutex_unlock(&reg.lock);
	return found;
}

/* Reason the driver called name is absent, or NULL when it was never registered. */
const char *rf_io_absent_reason(const char *name, char *buf, size_t len)
{
	const char *r = NULL;
	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < reg.nabsent; i++)
		if (strcmp(reg.absent[i].name, name) == 0) {
			snprintf(buf, len, "%s", reg.absent[i].why);
			r = buf;
		}
	pthread_mutex_unlock(&reg.lock);
	return r;
}

int rf_io_describe(char *buf, size_t len)
{
	char tmp[2048];
	size_t o = 0;
	pthread_once(&reg_once, register_builtins);
	pthread_mutex_lock(&reg.lock);
	o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, "available:");
	for (unsigned i = 0; i < reg.n && o < sizeof(tmp); i++)
		o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, "%s %s", i ? "," : "",
				      reg.ops[i]->name);
	if (reg.n == 0 && o < sizeof(tmp))
		o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, " none");
	for (unsigned i = 0; i < reg.nabsent && o < sizeof(tmp); i++)
		o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, "%s %s (%s)",
				      i ? "," : "; absent:", reg.absent[i].name, reg.absent[i].why);
	pthread_mutex_unlock(&reg.lock);
	return snprintf(buf, len, "%s", tmp);
}

void rf_io_print_usage(FILE *out)
{
	pthread_once(&reg_once, register_builtins);
	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < reg.n; i++)
		fprintf(out, "  %-6s %s\n", reg.ops[i]->name,
			reg.ops[i]->usage ? reg.ops[i]->usage : "");
	for (unsigned i = 0; i < reg.nabsent; i++)
		fprintf(out, "  %-6s (absent here: %s)\n", reg.absent[i].name, reg.absent[i].why);
	pthread_mutex_unlock(&reg.lock);
}

int rf_io_driver_init(const char *driver, int argc, char **argv, char *err, size_t len)
{
	const struct rf_io_ops *ops = rf_io_find(driver);
	char why[RF_IO_WHY_MAX];
	if (!ops) {
		if (driver && rf_io_absent_reason(driver, why, sizeof(why)))
			rf_io_err(err, len, "%s: driver unavailable here: %s", driver, why);
		else
			rf_io_err(err, len, "unknown driver '%s'", driver ? driver : "(null)");
		return -ENODEV;
	}
	if (!ops->init) {
		rf_io_err(err, len, "%s: the driver takes no process-wide arguments", ops->name);
		return -ENOTSUP;
	}
	return ops->init(argc, argv, err, len);
}

void rf_io_driver_fini(const char *driver)
{
	const struct rf_io_ops *ops = rf_io_find(driver);
	if (ops && ops->fini)
		ops->fini();
}

/* "xdp, dpdk, packet": the usable drivers with frame mode, for error lines. */
void rf_io_frame_drivers(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < reg.n && o < len; i++)
		if (reg.ops[i]->caps & RF_IO_CAP_FRAMES)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
					      reg.ops[i]->name);
	pthread_mutex_unlock(&reg.lock);
	if (!buf[0])
		snprintf(buf, len, "none");
}

