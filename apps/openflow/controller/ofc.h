/*
 * apps/openflow/controller/ctl.h: ringflow-controller's internals. Follow one PACKET_IN:
 *   io/sock_tcp.c  ringflow's tcp driver (the I/O poller's device, opened
 *                  "tcp:listen=...,framing=inline16,frame_off=2,frame_min=8,events=1")
 *                  reads every switch socket (one epoll set, non-blocking, partial messages
 *                  reassembled) and hands over whole OpenFlow messages, each in a packet
 *                  buffer from the controller's pool, plus connection up/down events
 *   ofc_io.c       the I/O poller (runtime poller 0) runs each connection's of_session
 *                  (handshake, setup, echo, faults) over those buffers; a PACKET_IN's buffer
 *                  itself is enqueued on the SPSC ring of the handler chosen by datapath id
 *                  (one switch: one handler, so its messages stay in order)
 *   ofc_learning.c a handler poller dequeues it, runs the learning switch (MAC table in the
 *                  lock-free hash, keyed by datapath id + MAC), writes the reply into the same
 *                  buffer and enqueues it on its SPSC ring back to the I/O poller
 *   ofc_io.c       the I/O poller hands the reply to the driver's tx_burst, which sends it on
 *                  the connection the buffer came from and returns the buffer to the pool
 * No lock on this path: the rings are single-producer single-consumer, the buffers come from
 * the pool's per-thread caches, the hash is lock-free (QSBR: pollers are quiescent each loop).
 * Under --idle adaptive, whoever fills a ring wakes the poller that empties it
 * (rf_runtime_wake), so a blocked poller does not sit on a message until its timeout.
 */
#ifndef RINGFLOW_OFC_H
#define RINGFLOW_OFC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <ringflow/hash.h>
#include <ringflow/pktbuf.h>
#include <ringflow/ring.h>
#include <ringflow/runtime.h>

#define OFC_MAX_HANDLERS 16
#define OFC_MAX_CONNS 1024   /* switch connections (the global cap's ceiling) */
#define OFC_REST_MAX_CONNS 64 /* REST connections open at once */
#define OFC_HOSTS_TABLE 65536 /* hosts (and links) table capacity; a switch gets 1/16 */
#define OFC_FD_RESERVE 64    /* fds kept for everything else (epoll, pipes, logs) */
#define OFC_POOL_BUFS 8192   /* message buffers: received, handed off, replies */
#define OFC_BUF_ROOM 3840    /* a buffer's bytes (4 KiB objects): a PACKET_IN of a full
			      * 1500-byte frame and the FLOW_MOD + PACKET_OUT answering it */
#define OFC_JUMBO_BUFS 64    /* for longer messages (echo data, multipart, jumbo frames) */
#define OFC_JUMBO_ROOM 65536 /* the longest OpenFlow message */
#define OFC_RING_SIZE 16384  /* > every buffer of both pools: no ring is ever full */

/* What travels with a message to its handler and back, in its buffer's headroom (the tcp
 * driver leaves the headroom alone). */
struct ofc_meta {
	uint64_t dpid;
	uint64_t t_ns;   /* hand-off time (apps only: the latency histogram), else 0 */
	uint8_t version; /* the session's OpenFlow version */
	uint8_t kind;    /* OFC_META_* */
};
#define OFC_META_PACKET_IN 0   /* a PACKET_IN from switch dpid */
#define OFC_META_SWITCH_GONE 1 /* no data: switch dpid left (its handler forgets it) */
#define OFC_META_SEED 2 /* data: records of MAC(6) port(4) the cluster knew for switch dpid
			 * (--cluster, new master): its handler learns them within its quota */
#define OFC_SEED_REC 10
_Static_assert(sizeof(struct ofc_meta) <= RF_PKTBUF_HEADROOM, "ofc_meta must fit the headroom");

static inline struct ofc_meta *ofc_meta_of(struct rf_pktbuf *b)
{
	return (struct ofc_meta *)b->buf_addr;
}

/* One message from a switch as the handlers' apps see it. */
struct ofc_buf {
	uint64_t dpid;
	uint64_t now_ms;     /* when the handler took it */
	uint8_t version;
	uint16_t len;        /* bytes at data */
	const uint8_t *data; /* one OpenFlow message (a PACKET_IN) */
};

/* Per-switch quotas on the shared tables, aging, and forgetting a departed switch
 * (ofc_quota.c): one struct ofc_learn per handler, used by that handler's thread only. */
#define OFC_MAC_KEY 14   /* dpid(8) MAC(6) -> seen seconds << 32 | port + 1 */
#define OFC_HOST_KEY 22  /* MAC(6) dpid(8) port(4) ipv4(4) -> seen ms + 1 */
#define OFC_REFRESH_S 10 /* a known MAC's last-seen time is rewritten at most this often */
struct ofc_learn_limits {
	unsigned macs_per_switch, hosts_per_switch; /* quotas */
	uint64_t mac_age_ms, host_age_ms;          /* idle entries are deleted after */
};
struct ofc_learn_stats {
	_Atomic uint64_t macs_refused, hosts_refused; /* not learned: the switch's quota was full */
	_Atomic uint64_t macs_aged, hosts_aged;       /* deleted as idle */
	_Atomic uint64_t switches_gone, reaped;       /* departed switches; their keys deleted */
};
struct ofc_learn;
struct ofc_net;
struct ofc_learn *ofc_learn_create(struct rf_hash *macs, const struct ofc_learn_limits *lim);
void ofc_learn_free(struct ofc_learn *l);
/* Tracks hosts too (net->hosts; NULL: no hosts app). Before start. */
void ofc_learn_set_hosts(struct ofc_learn *l, struct ofc_net *net);
/* Learns key -> port for switch dpid within its quota. 0, or -ENOSPC (quota or table full:
 * counted) / -ENOMEM. */
int ofc_learn_mac(struct ofc_learn *l, uint64_t dpid, const uint8_t key[OFC_MAC_KEY],
		  uint32_t port, uint64_t now_ms);
/* Records (or refreshes) a host entry of switch dpid within its quota. As ofc_learn_mac. */
int ofc_learn_host(struct ofc_learn *l, uint64_t dpid, const uint8_t key[OFC_HOST_KEY],
		   uint64_t now_ms);
/* Switch dpid left at now_ms: its entries are deleted by later steps, after a 5 s grace (it
 * takes them back if it returns meanwhile; only the 16 latest departures wait). */
void ofc_learn_gone(struct ofc_learn *l, uint64_t dpid, uint64_t now_ms);
/* One bounded step of aging and of deleting departed switches' entries (every 50 ms at
 * most). Returns the entries deleted. */
unsigned ofc_learn_step(struct ofc_learn *l, uint64_t now_ms);
/* True while departed switches' entries are due to be deleted (poll again soon). */
bool ofc_learn_busy(const struct ofc_learn *l, uint64_t now_ms);
const struct ofc_learn_stats *ofc_learn_stats(const struct ofc_learn *l);

struct ofc_handler {
	struct rf_ring *in;  /* I/O poller -> handler: struct rf_pktbuf * */
	struct rf_ring *out; /* handler -> I/O poller: the same buffers, holding the replies */
	struct rf_hash *macs; /* shared by all handlers: (dpid, MAC) -> port + 1 */
	_Atomic uint64_t packet_ins, flow_mods, packet_outs, floods;
	struct ofc_apps *apps; /* the --app list (ofc_app.h); NULL: learning switch only */
	struct ofc_learn *learn; /* per-switch quotas (ofc_quota.c); NULL: none (unit tests) */
	unsigned index;        /* this handler's number */
	unsigned poller;       /* the runtime poller it runs on (rf_runtime_wake) */
	struct rf_runtime *rt; /* to wake the I/O poller (poller 0) after replies */
};

struct ofc_io;
struct ofc_apps;

/* What a switch connection may cost (docs/openflow.md, "Limits and defences"). */
struct ofc_limits {
	unsigned max_conns;       /* open connections in all (<= OFC_MAX_CONNS) */
	unsigned per_source;      /* open connections from one IP address */
	unsigned max_handshaking; /* connections whose handshake is not done yet */
	unsigned handshake_ms;    /* from accept to FEATURES_REPLY, else closed */
	unsigned echo_idle_ms;    /* a silent switch gets an ECHO_REQUEST after this long */
	unsigned echo_dead_ms;    /* and is closed after this long without any message */
};
#define OFC_LIMITS_DEFAULT                                                                 \
	{.max_conns = OFC_MAX_CONNS, .per_source = 32, .max_handshaking = 256,             \
	 .handshake_ms = 5000, .echo_idle_ms = 5000, .echo_dead_ms = 15000}

/* What the connection defences did (ofc_io_guard_stats). */
struct ofc_guard_stats {
	uint64_t refused_source;      /* over the per-source cap: closed at once */
	uint64_t refused_handshaking; /* over the handshaking cap, none to evict: closed */
	uint64_t handshakes_evicted;  /* at the handshaking cap: the oldest closed for a new one */
	uint64_t handshake_timeouts;  /* handshake not done within handshake_ms */
	uint64_t echo_sent, echo_timeouts; /* liveness probes; switches closed as dead */
};

/* Prints at most one line per interval: true when this one may print, with *suppressed the
 * number of lines held back since the last one. I/O poller or any single thread. */
struct ofc_ratelog {
	uint64_t next_ms, suppressed;
};
bool ofc_ratelog_ok(struct ofc_ratelog *r, uint64_t now_ms, uint64_t *suppressed);

/* Opens the switch-facing device (ringflow's tcp driver listening on host:port) and the
 * buffer pools. Returns NULL with one line in err. */
struct ofc_io *ofc_io_create(const char *host, uint16_t port, struct ofc_handler *handlers,
			     unsigned n_handlers, const struct ofc_limits *lim, char *err,
			     size_t errlen);
/* The connection defences' counters (read after the pollers stopped). */
void ofc_io_guard_stats(const struct ofc_io *io, struct ofc_guard_stats *st);
void ofc_io_free(struct ofc_io *io);
/* Hands control messages, switch up/down and the timer to the apps (before start). */
void ofc_io_set_apps(struct ofc_io *io, struct ofc_apps *apps);
int ofc_io_wait_fd(const struct ofc_io *io);
/* --cluster: switches get the roles the cluster thread decides (cl_roles.h) and keep their
 * flows on connect (before start). */
struct cl_roles;
void ofc_io_set_roles(struct ofc_io *io, struct cl_roles *roles);
/* Switch connections open now. */
unsigned ofc_io_switches(const struct ofc_io *io);
/* PACKET_INs that waited in a held queue, and rounds that paused receiving (after stop). */
void ofc_io_backlog_stats(const struct ofc_io *io, uint64_t *held, uint64_t *paused);
/* The switch-facing device (its counters: rf_io_stats_get). */
struct rf_io_dev *ofc_io_dev(const struct ofc_io *io);

/* Poll functions (rf_poll_fn). */
unsigned ofc_io_poll(struct rf_poller *p, void *arg);
unsigned ofc_learning_poll(struct rf_poller *p, void *arg);

#endif /* RINGFLOW_OFC_H */
