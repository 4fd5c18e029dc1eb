/*
 * io/dpdk_pvt.h: what the DPDK driver's files share (dpdk.c the device and its bursts,
 * dpdk_eal.c the EAL, dpdk_pool.c the process's mbuf pool): the device and queue structs,
 * the driver-wide lock, and how an mbuf is the app's rf_pktbuf (it sits in the mbuf's
 * private area). DPDK's headers need GNU extensions: every file including this one builds
 * as gnu11.
 */
#ifndef RINGFLOW_IO_DPDK_PVT_H
#define RINGFLOW_IO_DPDK_PVT_H

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <net/if.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#include "io/io_pvt.h"
#include "io/net/net.h"

#define DPDK_RING_SIZE 1024
#define DPDK_NO_HUGE_MB "256"

#define ETH_HDR 14u
#define VLAN_HDR 4u

/* Driver counters beyond rf_io_qstats (xstats), written by the queue's thread only. */
struct dpdk_xst {
	_Atomic uint64_t tx_copies, tx_no_neigh, tx_runt, tx_too_long, rx_runt, rx_multiseg;
	_Atomic uint64_t rx_vlan_reinserted;
};

struct dpdk_queue {
	RF_CACHE_ALIGNED struct rf_net_ctx net; /* own line: queues run on different cores */
	struct rf_io_qstats st; /* written by this queue's thread only */
	struct dpdk_xst xst;
};

struct dpdk_dev {
	uint16_t port_id;
	struct rte_mempool *mp;      /* the process's shared mbuf pool */
	struct rf_pktbuf_pool *pool; /* the ext pool over mp (shared too) */
	unsigned nq;
	unsigned max_frame; /* frame mode: longest frame tx takes (MTU + Ethernet + VLAN) */
	bool hotplugged;    /* vdev=: we probed it (and remove it at close); dev=: the EAL's */
	int ns_fd;   /* the netns the device was opened in (net_af_xdp detaches its program there) */
	int hold_fd; /* net_af_packet: kernel UDP socket on ip:port that keeps the kernel quiet */
	int ctl_fd;  /* socket PMDs: an AF_INET socket in the iface's netns, for its link state */
	char vdev[64];
	char iface[IF_NAMESIZE];
	struct dpdk_queue q[];
};

/* Open/close/init/fini take rf_dpdk_lock (dpdk_eal.c); rf_dpdk_ndevs counts open devices. */
extern pthread_mutex_t rf_dpdk_lock;
extern unsigned rf_dpdk_ndevs;

static inline struct rf_pktbuf *pkt_of(struct rte_mbuf *m)
{
	return rte_mbuf_to_priv(m);
}

static inline void pkt_bind(struct rf_pktbuf *b, struct rte_mbuf *m)
{
	b->buf_addr = m->buf_addr;
	b->buf_len = m->buf_len;
	b->drv = m;
}

/* dpdk_eal.c: starts the EAL with the defaults unless it runs (caller holds rf_dpdk_lock);
 * rf_io_driver_init/fini("dpdk"). */
int rf_dpdk_eal_start(char *err, size_t len);
int rf_dpdk_init(int argc, char **argv, char *err, size_t len);
void rf_dpdk_fini(void);

/* dpdk_pool.c: the process's one mbuf pool (and the pktbuf pool over it), made by the first
 * open with n mbufs and shared; put by each close (caller holds rf_dpdk_lock). */
int rf_dpdk_pool_get(struct dpdk_dev *x, unsigned n, char *err, size_t len);
void rf_dpdk_pool_put(void);

#endif /* RINGFLOW_IO_DPDK_PVT_H */
