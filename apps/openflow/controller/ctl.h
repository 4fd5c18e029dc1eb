/*
 * apps/openflow/controller/ctl.h: ringflow-controller's internals. Follow one PACKET_IN:
 *   io/sock_tcp.c  ringflow's tcp driver (the I/O poller's device, opened
 *                  "tcp:listen=...,framing=inline16,frame_off=2,frame_min=8,events=1")
 *                  reads every switch socket (one epoll set, non-blocking, partial messages
 *                  reassembled) and hands over whole OpenFlow messages, each in a packet
 *                  buffer from the controller's pool, plus connection up/down events
 *   ctl_io.c       the I/O poller (runtime poller 0) runs each connection's of_session
 *                  (handshake, setup, echo, faults) over those buffers; a PACKET_IN's buffer
 *                  itself is enqueued on the SPSC ring of the handler chosen by datapath id
 *                  (one switch: one handler, so its messages stay in order)
 *   ctl_learning.c a handler poller dequeues it, runs the learning switch (MAC table in the
 *                  lock-free hash, keyed by datapath id + MAC), writes the reply into the same
 *                  buffer and enqueues it on its SPSC ring back to the I/O poller
 *   ctl_io.c       the I/O poller hands the reply to the driver's tx_burst, which sends it on
 *                  the connection the buffer came from and returns the buffer to the pool
 * No lock on this path: the rings are single-producer single-consumer, the buffers come from
 * the pool's per-thread caches, the hash is lock-free (QSBR: pollers are quiescent each loop).
 * Under --idle adaptive, whoever fills a ring wakes the poller that empties it
 * (rf_runtime_wake), so a blocked poller does not sit on a message until its timeout.
 */
#ifndef RINGFLOW_CTL_H
#define RINGFLOW_CTL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <ringflow/hash.h>
#include <ringflow/pktbuf.h>
#include <ringflow/ring.h>
#include <ringflow/runtime.h>

#define CTL_MAX_HANDLERS 16
#define CTL_MAX_CONNS 1024   /* switch connections (the global cap's ceiling) */
#define CTL_REST_MAX_CONNS 64 /* REST connections open at once */
#define CTL_HOSTS_TABLE 65536 /* hosts (and links) table capacity; a switch gets 1/16 */
#define CTL_FD_RESERVE 64    /* fds kept for everything else (epoll, pipes, logs) */
#define CTL_POOL_BUFS 8192   /* message buffers: received, handed off, replies */
#define CTL_BUF_ROOM 3840    /* a buffer's bytes (4 KiB objects): a PACKET_IN of a full
			      * 1500-byte frame and the FLOW_MOD + PACKET_OUT answering it */
#define CTL_JUMBO_BUFS 64    /* for longer messages (echo data, multipart, jumbo frames) */
#define CTL_JUMBO_ROOM 65536 /* the longest OpenFlow message */
#define CTL_RING_SIZE 16384  /* > every buffer of both pools: no ring is ever full */

/* What travels with a message to its handler and back, in its buffer's headroom (the tcp
 * driver leaves the headroom alone). */
struct ctl_meta {
	uint64_t dpid;
	uint64_t t_ns;   /* hand-off time (apps only: the latency histogram), else 0 */
	uint8_t version; /* the session's OpenFlow version */
	uint8_t kind;    /* CTL_META_* */
};
#define CTL_META_PACKET_IN 0   /* a PACKET_IN from switch dpid */
#define CTL_META_SWITCH_GONE 1 /* no data: switch dpid left (its handler forgets it) */
#define CTL_META_SEED 2 /* data: records of MAC(6) port(4) the cluster knew for switch dpid
			 * (--cluster, new master): its handler learns them within its quota */
#define CTL_SEED_REC 10
_Static_assert(sizeof(struct ctl_meta) <= RF_PKTBUF_HEADROOM, "ctl_meta must fit the headroom");

static inline struct ctl_meta *ctl_meta_of(struct rf_pktbuf *b)
{
	return (struct ctl_meta *)b->buf_addr;
}

/* One message from a switch as the handlers' apps see it. */
struct ctl_buf {
	uint64_t dpid;
	uint64_t now_ms;     /* when the handler took it */
	uint8_t version;
	uint16_t len;        /* bytes at data */
	const uint8_t *data; /* one OpenFlow message (a PACKET_IN) */
};

/* Per-switch quotas on the shared tables, aging, and forgetting a departed switch
 * (ctl_quota.c): one struct ctl_learn per handler, used by that handler's thread only. */
#define CTL_MAC_KEY 14   /* dpid(8) MAC(6) -> seen seconds << 32 | port + 1 */
#define CTL_HOST_KEY 22  /* MAC(6) dpid(8) port(4) ipv4(4) -> seen ms + 1 */
#define CTL_REFRESH_S 10 /* a known MAC's last-seen time is rewritten at most this often */
struct ctl_learn_limits {
	unsigned macs_per_switch, hosts_per_switch; /* quotas */
	uint64_t mac_age_ms, host_age_ms;          /* idle entries are deleted after */
};
struct ctl_learn_stats {
	_Atomic uint64_t macs_refused, hosts_refused; /* not learned: the switch's quota was full */
	_Atomic uint64_t macs_aged, hosts_aged;       /* deleted as idle */
	_Atomic uint64_t switches_gone, reaped;       /* departed switches; their keys deleted */
};
struct ctl_learn;
struct ctl_net;
struct ctl_learn *ctl_learn_create(struct rf_hash *macs, const struct ctl_learn_limits *lim);
void ctl_learn_free(struct ctl_learn *l);
/* Tracks hosts too (net->hosts; NULL: no hosts app). Before start. */
void ctl_learn_set_hosts(struct ctl_learn *l, struct ctl_net *net);
/* Learns key -> port for switch dpid within its quota. 0, or -ENOSPC (quota or table full:
 * counted) / -ENOMEM. */
int ctl_learn_mac(struct ctl_learn *l, uint64_t dpid, const uint8_t key[CTL_MAC_KEY],
		  uint32_t port, uint64_t now_ms);
/* Records (or refreshes) a host entry of switch dpid within its quota. As ctl_learn_mac. */
int ctl_learn_host(struct ctl_learn *l, uint64_t dpid, const uint8_t key[CTL_HOST_KEY],
		   uint64_t now_ms);
/* Switch dpid left at now_ms: its entries are deleted by later steps, after a 5 s grace (it
 * takes them back if it returns meanwhile; only the 16 latest departures wait). */
void ctl_learn_gone(struct ctl_learn *l, uint64_t dpid, uint64_t now_ms);
/* One bounded step of aging and of deleting departed switches' entries (every 50 ms at
 * most). Returns the entries deleted. */
unsigned ctl_learn_step(struct ctl_learn *l, uint64_t now_ms);
/* True while departed switches' entries are due to be deleted (poll again soon). */
bool ctl_learn_busy(const struct ctl_learn *l, uint64_t now_ms);
const struct ctl_learn_stats *ctl_learn_stats(const struct ctl_learn *l);

struct ctl_handler {
	struct rf_ring *in;  /* I/O poller -> handler: struct rf_pktbuf * */
	struct rf_ring *out; /* handler -> I/O poller: the same buffers, holding the replies */
	struct rf_hash *macs; /* shared by all handlers: (dpid, MAC) -> port + 1 */
	_Atomic uint64_t packet_ins, flow_mods, packet_outs, floods;
	struct ctl_apps *apps; /* the --app list (ctl_app.h); NULL: learning switch only */
	struct ctl_learn *learn; /* per-switch quotas (ctl_quota.c); NULL: none (unit tests) */
	unsigned index;        /* this handler's number */
	unsigned poller;       /* the runtime poller it runs on (rf_runtime_wake) */
	struct rf_runtime *rt; /* to wake the I/O poller (poller 0) after replies */
};

struct ctl_io;
struct ctl_apps;

/* What a switch connection may cost (docs/openflow.md, "Limits and defences"). */
struct ctl_limits {
	unsigned max_conns;       /* open connections in all (<= CTL_MAX_CONNS) */
	unsigned per_source;      /* open connections from one IP address */
	unsigned max_handshaking; /* connections whose handshake is not done yet */
	unsigned handshake_ms;    /* from accept to FEATURES_REPLY, else closed */
	unsigned echo_idle_ms;    /* a silent switch gets an ECHO_REQUEST after this long */
	unsigned echo_dead_ms;    /* and is closed after this long without any message */
};
#define CTL_LIMITS_DEFAULT                                                                 \
	{.max_conns = CTL_MAX_CONNS, .per_source = 32, .max_handshaking = 256,             \
	 .handshake_ms = 5000, .echo_idle_ms = 5000, .echo_dead_ms = 15000}

/* What the connection defences did (ctl_io_guard_stats). */
struct ctl_guard_stats {
	uint64_t refused_source;      /* over the per-source cap: closed at once */
	uint64_t refused_handshaking; /* over the handshaking cap, none to evict: closed */
	uint64_t handshakes_evicted;  /* at the handshaking cap: the oldest closed for a new one */
	uint64_t handshake_timeouts;  /* handshake not done within handshake_ms */
	uint64_t echo_sent, echo_timeouts; /* liveness probes; switches closed as dead */
};

/* Prints at most one line per interval: true when this one may print, with *suppressed the
 * number of lines held back since the last one. I/O poller or any single thread. */
struct ctl_ratelog {
	uint64_t next_ms, suppressed;
};
bool ctl_ratelog_ok(struct ctl_ratelog *r, uint64_t now_ms, uint64_t *suppressed);

/* Opens the switch-facing device (ringflow's tcp driver listening on host:port) and the
 * buffer pools. Returns NULL with one line in err. */
struct ctl_io *ctl_io_create(const char *host, uint16_t port, struct ctl_handler *handlers,
			     unsigned n_handlers, const struct ctl_limits *lim, char *err,
			     size_t errlen);
/* The connection defences' counters (read after the pollers stopped). */
void ctl_io_guard_stats(const struct ctl_io *io, struct ctl_guard_stats *st);
void ctl_io_free(struct ctl_io *io);
/* Hands control messages, switch up/down and the timer to the apps (before start). */
void ctl_io_set_apps(struct ctl_io *io, struct ctl_apps *apps);
int ctl_io_wait_fd(const struct ctl_io *io);
/* --cluster: switches get the roles the cluster thread decides (cl_roles.h) and keep their
 * flows on connect (before start). */
struct cl_roles;
void ctl_io_set_roles(struct ctl_io *io, struct cl_roles *roles);
/* Switch connections open now. */
unsigned ctl_io_switches(const struct ctl_io *io);
/* PACKET_INs that waited in a held queue, and rounds that paused receiving (after stop). */
void ctl_io_backlog_stats(const struct ctl_io *io, uint64_t *held, uint64_t *paused);
/* The switch-facing device (its counters: rf_io_stats_get). */
struct rf_io_dev *ctl_io_dev(const struct ctl_io *io);

/* Poll functions (rf_poll_fn). */
unsigned ctl_io_poll(struct rf_poller *p, void *arg);
unsigned ctl_learning_poll(struct rf_poller *p, void *arg);

#endif /* RINGFLOW_CTL_H */
