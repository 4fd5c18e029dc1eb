/*
 * bench/tools/ethtool_stats.c: `ethtool -S` in three ioctls. The count comes from
 * ETHTOOL_GSSET_INFO (older drivers without it: ETHTOOL_GDRVINFO's n_stats); names and values
 * are then fetched with a buffer of exactly that many entries.
 */
#include "ethtool_stats.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

_Static_assert(RF_ETH_NAME_LEN == ETH_GSTRING_LEN, "ethtool string length");

static int ethtool_ioctl(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

static int stats_count(int fd, const char *ifname, unsigned *n)
{
	/* The reply carries one u32 per set asked for, after the header. */
	union {
		struct ethtool_sset_info hdr;
		char room[sizeof(struct ethtool_sset_info) + sizeof(uint32_t)];
	} sset;
	memset(&sset, 0, sizeof(sset));
	sset.hdr.cmd = ETHTOOL_GSSET_INFO;
	sset.hdr.sset_mask = 1ULL << ETH_SS_STATS;
	int rc = ethtool_ioctl(fd, ifname, &sset);
	if (rc == 0) {
		*n = (sset.hdr.sset_mask & (1ULL << ETH_SS_STATS)) ? sset.hdr.data[0] : 0;
		return 0;
	}
	if (rc != -EOPNOTSUPP)
		return rc;
	struct ethtool_drvinfo drv = {.cmd = ETHTOOL_GDRVINFO};
	rc = ethtool_ioctl(fd, ifname, &drv);
	if (rc == 0)
		*n = drv.n_stats;
	return rc;
}

int rf_ethtool_stats_read(const char *ifname, struct rf_ethtool_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (strlen(ifname) >= IFNAMSIZ)
		return -ENODEV;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct ethtool_gstrings *strs = NULL;
	struct ethtool_stats *vals = NULL;
	unsigned n = 0;
	int rc = stats_count(fd, ifname, &n);
	if (rc || n == 0)
		goto out;
	strs = calloc(1, sizeof(*strs) + (size_t)n * ETH_GSTRING_LEN);
	vals = calloc(1, sizeof(*vals) + (size_t)n * sizeof(uint64_t));
	st->name = calloc(n, RF_ETH_NAME_LEN);
	st->value = calloc(n, sizeof(uint64_t));
	if (!strs || !vals || !st->name || !st->value) {
		rc = -ENOMEM;
		goto out;
	}
	strs->cmd = ETHTOOL_GSTRINGS;
	strs->string_set = ETH_SS_STATS;
	strs->len = n;
	vals->cmd = ETHTOOL_GSTATS;
	vals->n_stats = n;
	rc = ethtool_ioctl(fd, ifname, strs);
	if (rc == 0)
		rc = ethtool_ioctl(fd, ifname, vals);
	if (rc)
		goto out;
	/* The driver may report fewer than it announced (a queue went away in between). */
	if (strs->len < n)
		n = strs->len;
	if (vals->n_stats < n)
		n = vals->n_stats;
	for (unsigned i = 0; i < n; i++) {
		memcpy(st->name[i], strs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		st->name[i][RF_ETH_NAME_LEN - 1] = '\0';
		st->value[i] = vals->data[i];
	}
	st->n = n;
out:
	free(strs);
	free(vals);
	close(fd);
	if (rc)
		rf_ethtool_stats_free(st);
	return rc;
}

int rf_ethtool_stats_find(const struct rf_ethtool_stats *st, const char *name)
{
	for (unsigned i = 0; i < st->n; i++)
		if (!strcmp(st->name[i], name))
			return (int)i;
	return -1;
}

void rf_ethtool_stats_free(struct rf_ethtool_stats *st)
{
	free(st->name);
	free(st->value);
	memset(st, 0, sizeof(*st));
}
