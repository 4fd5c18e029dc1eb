/*
 * apps/openflow/controller/ctl_app.h: the handler interface of ringflow-controller, so that
 * the learning switch, topology discovery and host tracking are three apps a user mixes
 * with `--app learning,topology,hosts`, and can embed an app of their own.
 *
 * An app is a struct ctl_app: a name and up to five callbacks, any of them NULL. Who calls:
 *   on_packet_in    a handler poller (several run in parallel; one switch always on the
 *                   same one): the hot path. The message is parsed once for all apps; an
 *                   app appends its replies to pk->reply (sent to that switch in order).
 *   on_switch_up    the I/O poller, once the switch's ports are known (1.3: PORT_DESC
 *                   reply; 1.0: FEATURES_REPLY); out goes straight to that switch.
 *   on_port_status  the I/O poller, on PORT_STATUS (after the port table is updated).
 *   on_switch_down  the I/O poller, when the connection closes.
 *   on_timer        the I/O poller, every CTL_TIMER_MS, once per connected switch (sw, out)
 *                   and once with sw = NULL, out = NULL (aging, global work).
 * Apps run in order of the --app list; state shared between threads lives in ringflow's
 * lock-free hash (every caller above is a QSBR-registered poller). Callbacks never block.
 *
 * The network view (struct ctl_net) is what the apps maintain and the REST thread reads:
 * four lock-free hashes whose values are plain numbers (no pointer to free, so a reader
 * can never see freed memory), plus counters. Keys are big-endian byte strings:
 *   switches  dpid(8)                                  -> version << 48 | up-time ms
 *   ports     dpid(8) port(4) name(16, NUL-padded)     -> hw_addr << 16 | CTL_PORT_* bits
 *   links     src dpid(8) src port(4) dst dpid(8) dst port(4)   -> last seen ms + 1
 *   ends      dpid(8) port(4) (either end of a link)            -> last seen ms + 1
 *   hosts     mac(6) dpid(8) port(4) ipv4(4)           -> last seen ms + 1
 * Errors: ctl_apps_create returns NULL with one line in err.
 */
#ifndef RINGFLOW_CTL_APP_H
#define RINGFLOW_CTL_APP_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <ringflow/hash.h>

#include "ctl.h"
#include "of.h"
#include "of_eth.h"
#include "of_session.h"

#define CTL_MAX_APPS 8
#define CTL_MAX_PORTS 64     /* ports remembered per switch for LLDP */
#define CTL_TIMER_MS 1000    /* LLDP period */
#define CTL_LINK_AGE_MS 3500 /* a link not seen for this long is removed */
#define CTL_HOST_AGE_MS 300000
#define CTL_LLDP_EPOCH_MS 10000 /* the LLDP tag names the time in these units */

#define CTL_PORT_KEY 28
#define CTL_PORT_VALID 0x1u
#define CTL_PORT_LINK_DOWN 0x2u  /* OFPPS_LINK_DOWN */
#define CTL_PORT_ADMIN_DOWN 0x4u /* OFPPC_PORT_DOWN */

#define CTL_LAT_BUCKETS 16 /* packet_in -> reply, bucket i: [2^i, 2^(i+1)) microseconds */

struct ctl_net {
	struct rf_hash *switches, *ports, *links, *hosts, *ends;
	uint8_t lldp_key[16];                 /* the LLDP tag's secret (ctl_topology.c) */
	_Atomic uint64_t lldp_rejected;       /* LLDP without our tag, replayed, or unknown switch */
	_Atomic uint64_t msgs[OF_TYPE_COUNT]; /* messages received by type (I/O poller) */
	_Atomic uint64_t lldp_out, lldp_in;   /* LLDP frames sent / received back */
	_Atomic uint64_t first_up_ms;         /* first switch up (0: none yet) */
	_Atomic uint64_t last_link_ms;        /* the newest link appeared then */
	_Atomic uint64_t lat[CTL_LAT_BUCKETS]; /* I/O poller: hand-off -> reply queued */
};

/* A switch as the I/O-side callbacks see it. */
struct ctl_switch {
	uint64_t dpid;
	uint8_t version;
	unsigned n_ports;
	uint32_t ports[CTL_MAX_PORTS];
	uint8_t hw[CTL_MAX_PORTS][6];
	char name[CTL_MAX_PORTS][16];
};

/* One PACKET_IN as on_packet_in sees it (parsed once for all apps). */
struct ctl_pkt {
	struct ctl_handler *h;
	const struct ctl_buf *buf; /* the raw message (m points into it) */
	unsigned handler; /* index of the handler poller */
	uint64_t dpid;
	uint8_t version;
	uint64_t now_ms;
	const struct of_msg *m;   /* type OF_PACKET_IN */
	const struct of_eth *eth; /* its frame's Ethernet header */
	uint8_t *reply;           /* append replies here: reply[len..cap) */
	size_t len, cap;
};

struct ctl_app {
	const char *name;
	void *arg; /* the app's own state (e.g. the struct ctl_net) */
	void (*on_packet_in)(const struct ctl_app *a, struct ctl_pkt *pk);
	void (*on_switch_up)(const struct ctl_app *a, const struct ctl_switch *sw,
			     uint64_t now_ms, struct of_out *out);
	void (*on_port_status)(const struct ctl_app *a, const struct ctl_switch *sw,
			       const struct of_port_status *ps, uint64_t now_ms);
	void (*on_switch_down)(const struct ctl_app *a, uint64_t dpid);
	void (*on_timer)(const struct ctl_app *a, const struct ctl_switch *sw, uint64_t now_ms,
			 struct of_out *out);
};

/* The built-in apps (arg = the struct ctl_net; learning also uses pk->h). */
struct ctl_app ctl_learning_app(struct ctl_net *net);
struct ctl_app ctl_topology_app(struct ctl_net *net);
struct ctl_app ctl_hosts_app(struct ctl_net *net);

/* The learning switch's reply to the PACKET_IN in b, written into reply[0..cap) (not
 * overlapping b's data). Returns the bytes written (0: nothing to send). Runs on a handler
 * poller. */
size_t ctl_learning_reply(struct ctl_handler *h, const struct ctl_buf *b, uint8_t *reply,
			  size_t cap);

/* The mailbox behind GET /api/flows/{dpid} (ctl_flows.c has the protocol). */
#define CTL_FLOWS_MAX 10000             /* flow entries in one answer */
#define CTL_FLOWS_MAX_BYTES (4l << 20)  /* bytes of JSON in one answer */
struct ctl_flow_req {
	_Atomic int state;
	uint64_t dpid; /* REST -> I/O */
	uint32_t xid;  /* I/O only */
	const struct of_session *session; /* I/O only: the connection asked */
	bool truncated; /* I/O until DONE: the answer hit a cap */
	unsigned n;    /* I/O only: entries so far */
	FILE *f;       /* I/O only: the JSON being written into text */
	char *text;    /* owned by I/O until DONE, then by the REST thread */
	size_t len;
};
void ctl_flows_init(struct ctl_flow_req *r);
void ctl_flows_fini(struct ctl_flow_req *r);
/* REST thread, never blocking: post a request for dpid's flows (0, or -EBUSY: one is out);
 * poll it (1: done, *json the flows as a JSON array, malloc'd, or NULL when the reply could
 * not be collected; 0: not yet); cancel it (gives up unless it just came: then as poll). */
int ctl_flows_post(struct ctl_flow_req *r, uint64_t dpid);
int ctl_flows_poll(struct ctl_flow_req *r, char **json, bool *truncated);
int ctl_flows_cancel(struct ctl_flow_req *r, char **json, bool *truncated);
/* I/O poller: true with *dpid when a request waits to be sent; then ctl_flows_send on that
 * switch's session. ctl_flows_reply takes every OF_MP_FLOW reply. */
bool ctl_flows_pending(struct ctl_flow_req *r, uint64_t *dpid);
void ctl_flows_send(struct ctl_flow_req *r, struct of_session *s, struct of_out *out);
void ctl_flows_reply(struct ctl_flow_req *r, const struct of_session *s, const struct of_msg *m);

struct ctl_apps;

/* Makes the network view (tables sized for max_entries links and hosts) and the app list from a
 * comma-separated list ("learning,topology,hosts"). Call from a QSBR-registered thread. */
struct ctl_apps *ctl_apps_create(const char *list, unsigned max_entries, char *err,
				 size_t errlen);
void ctl_apps_free(struct ctl_apps *a);
struct ctl_net *ctl_apps_net(struct ctl_apps *a);
/* Adds a user's app at the end of the list. Returns 0 or -ENOSPC. Before start only. */
int ctl_apps_add(struct ctl_apps *a, const struct ctl_app *app);
/* True when some app has an on_packet_in callback. */
bool ctl_apps_want_packet_in(const struct ctl_apps *a);

/* Dispatch, called by ctl_io.c / ctl_learning.c (and by tests). */
/* A message from an UP switch other than PACKET_IN (I/O poller). */
void ctl_apps_control(struct ctl_apps *a, const struct of_session *s, const struct of_msg *m,
		      uint64_t now_ms, struct of_out *out);
/* The switch's connection closed (I/O poller). */
void ctl_apps_switch_down(struct ctl_apps *a, uint64_t dpid);
/* A PACKET_IN in b (handler poller `idx`): the apps' replies go into reply[0..cap) (not
 * overlapping b's data); returns their length (0: nothing to send). */
size_t ctl_apps_packet_in(struct ctl_apps *a, struct ctl_handler *h, unsigned idx,
			  const struct ctl_buf *b, uint64_t now_ms, uint8_t *reply, size_t cap);
/* Timer: true when on_timer is due at now_ms (then call ctl_apps_timer_switch for every
 * connected switch and ctl_apps_timer_done once). */
bool ctl_apps_timer_due(struct ctl_apps *a, uint64_t now_ms);
void ctl_apps_timer_switch(struct ctl_apps *a, uint64_t dpid, uint64_t now_ms,
			   struct of_out *out);
void ctl_apps_timer_done(struct ctl_apps *a, uint64_t now_ms);

/* Monotonic milliseconds / nanoseconds. */
uint64_t ctl_now_ms(void);
uint64_t ctl_now_ns(void);
/* The flow-stats mailbox. */
struct ctl_flow_req *ctl_apps_flows(struct ctl_apps *a);
/* Counts one PACKET_IN whose reply came back after `ns` (I/O poller only). */
void ctl_apps_latency(struct ctl_apps *a, uint64_t ns);

/* Key helpers (big-endian). */
static inline void ctl_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static inline uint64_t ctl_get64(const uint8_t *p)
{
	return (uint64_t)of_get32(p) << 32 | of_get32(p + 4);
}

static inline void ctl_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Removes every link with (dpid, port) at either end; port OFPP_ANY: any port of dpid. */
void ctl_links_remove(struct ctl_net *net, uint64_t dpid, uint32_t port);
/* True when (dpid, port) is an end of a link seen within CTL_LINK_AGE_MS (one lookup). */
bool ctl_links_has_end(struct ctl_net *net, uint64_t dpid, uint32_t port, uint64_t now_ms);
/* Draws the LLDP tag's secret (getrandom). 0 or -errno. */
int ctl_lldp_key_init(struct ctl_net *net);

#endif /* RINGFLOW_CTL_APP_H */
