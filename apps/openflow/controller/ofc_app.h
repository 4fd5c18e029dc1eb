/*
 * apps/openflow/controller/ofc_app.h: the handler interface of ringflow-controller, so that
 * the learning switch, topology discovery and host tracking are three apps a user mixes
 * with `--app learning,topology,hosts`, and can embed an app of their own.
 *
 * An app is a struct ofc_app: a name and up to five callbacks, any of them NULL. Who calls:
 *   on_packet_in    a handler poller (several run in parallel; one switch always on the
 *                   same one): the hot path. The message is parsed once for all apps; an
 *                   app appends its replies to pk->reply (sent to that switch in order).
 *   on_switch_up    the I/O poller, once the switch's ports are known (1.3: PORT_DESC
 *                   reply; 1.0: FEATURES_REPLY); out goes straight to that switch.
 *   on_port_status  the I/O poller, on PORT_STATUS (after the port table is updated).
 *   on_switch_down  the I/O poller, when the connection closes.
 *   on_timer        the I/O poller, every OFC_TIMER_MS, once per connected switch (sw, out)
 *                   and once with sw = NULL, out = NULL (aging, global work).
 * Apps run in order of the --app list; state shared between threads lives in ringflow's
 * lock-free hash (every caller above is a QSBR-registered poller). Callbacks never block.
 *
 * The network view (struct ofc_net) is what the apps maintain and the REST thread reads:
 * four lock-free hashes whose values are plain numbers (no pointer to free, so a reader
 * can never see freed memory), plus counters. Keys are big-endian byte strings:
 *   switches  dpid(8)                                  -> version << 48 | up-time ms
 *   ports     dpid(8) port(4) name(16, NUL-padded)     -> hw_addr << 16 | OFC_PORT_* bits
 *   links     src dpid(8) src port(4) dst dpid(8) dst port(4)   -> last seen ms + 1
 *   ends      dpid(8) port(4) (either end of a link)            -> last seen ms + 1
 *   hosts     mac(6) dpid(8) port(4) ipv4(4)           -> last seen ms + 1
 * Errors: ofc_apps_create returns NULL with one line in err.
 */
#ifndef RINGFLOW_OFC_APP_H
#define RINGFLOW_OFC_APP_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <ringflow/hash.h>

#include "ofc.h"
#include "of.h"
#include "of_eth.h"
#include "of_session.h"

#define OFC_MAX_APPS 8
#define OFC_MAX_PORTS 64     /* ports remembered per switch for LLDP */
#define OFC_TIMER_MS 1000    /* LLDP period */
#define OFC_LINK_AGE_MS 3500 /* a link not seen for this long is removed */
#define OFC_HOST_AGE_MS 300000
#define OFC_LLDP_EPOCH_MS 10000 /* the LLDP tag names the time in these units */

#define OFC_PORT_KEY 28
#define OFC_PORT_VALID 0x1u
#define OFC_PORT_LINK_DOWN 0x2u  /* OFPPS_LINK_DOWN */
#define OFC_PORT_ADMIN_DOWN 0x4u /* OFPPC_PORT_DOWN */

#define OFC_LAT_BUCKETS 16 /* packet_in -> reply, bucket i: [2^i, 2^(i+1)) microseconds */

struct ofc_net {
	struct rf_hash *switches, *ports, *links, *hosts, *ends;
	uint8_t lldp_key[16];                 /* the LLDP tag's secret (ofc_topology.c) */
	_Atomic uint64_t lldp_rejected;       /* LLDP without our tag, replayed, or unknown switch */
	_Atomic uint64_t msgs[OF_TYPE_COUNT]; /* messages received by type (I/O poller) */
	_Atomic uint64_t lldp_out, lldp_in;   /* LLDP frames sent / received back */
	_Atomic uint64_t first_up_ms;         /* first switch up (0: none yet) */
	_Atomic uint64_t last_link_ms;        /* the newest link appeared then */
	_Atomic uint64_t lat[OFC_LAT_BUCKETS]; /* I/O poller: hand-off -> reply queued */
};

/* A switch as the I/O-side callbacks see it. */
struct ofc_switch {
	uint64_t dpid;
	uint8_t version;
	unsigned n_ports;
	uint32_t ports[OFC_MAX_PORTS];
	uint8_t hw[OFC_MAX_PORTS][6];
	char name[OFC_MAX_PORTS][16];
};

/* One PACKET_IN as on_packet_in sees it (parsed once for all apps). */
struct ofc_pkt {
	struct ofc_handler *h;
	const struct ofc_buf *buf; /* the raw message (m points into it) */
	unsigned handler; /* index of the handler poller */
	uint64_t dpid;
	uint8_t version;
	uint64_t now_ms;
	const struct of_msg *m;   /* type OF_PACKET_IN */
	const struct of_eth *eth; /* its frame's Ethernet header */
	uint8_t *reply;           /* append replies here: reply[len..cap) */
	size_t len, cap;
};

struct ofc_app {
	const char *name;
	void *arg; /* the app's own state (e.g. the struct ofc_net) */
	void (*on_packet_in)(const struct ofc_app *a, struct ofc_pkt *pk);
	void (*on_switch_up)(const struct ofc_app *a, const struct ofc_switch *sw,
			     uint64_t now_ms, struct of_out *out);
	void (*on_port_status)(const struct ofc_app *a, const struct ofc_switch *sw,
			       const struct of_port_status *ps, uint64_t now_ms);
	void (*on_switch_down)(const struct ofc_app *a, uint64_t dpid);
	void (*on_timer)(const struct ofc_app *a, const struct ofc_switch *sw, uint64_t now_ms,
			 struct of_out *out);
};

/* The built-in apps (arg = the struct ofc_net; learning also uses pk->h). */
struct ofc_app ofc_learning_app(struct ofc_net *net);
struct ofc_app ofc_topology_app(struct ofc_net *net);
struct ofc_app ofc_hosts_app(struct ofc_net *net);

/* The learning switch's reply to the PACKET_IN in b, written into reply[0..cap) (not
 * overlapping b's data). Returns the bytes written (0: nothing to send). Runs on a handler
 * poller. */
size_t ofc_learning_reply(struct ofc_handler *h, const struct ofc_buf *b, uint8_t *reply,
			  size_t cap);

/* The mailbox behind GET /api/flows/{dpid} (ofc_flows.c has the protocol). */
#define OFC_FLOWS_MAX 10000             /* flow entries in one answer */
#define OFC_FLOWS_MAX_BYTES (4l << 20)  /* bytes of JSON in one answer */
struct ofc_flow_req {
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
void ofc_flows_init(struct ofc_flow_req *r);
void ofc_flows_fini(struct ofc_flow_req *r);
/* REST thread, never blocking: post a request for dpid's flows (0, or -EBUSY: one is out);
 * poll it (1: done, *json the flows as a JSON array, malloc'd, or NULL when the reply could
 * not be collected; 0: not yet); cancel it (gives up unless it just came: then as poll). */
int ofc_flows_post(struct ofc_flow_req *r, uint64_t dpid);
int ofc_flows_poll(struct ofc_flow_req *r, char **json, bool *truncated);
int ofc_flows_cancel(struct ofc_flow_req *r, char **json, bool *truncated);
/* I/O poller: true with *dpid when a request waits to be sent; then ofc_flows_send on that
 * switch's session. ofc_flows_reply takes every OF_MP_FLOW reply. */
bool ofc_flows_pending(struct ofc_flow_req *r, uint64_t *dpid);
void ofc_flows_send(struct ofc_flow_req *r, struct of_session *s, struct of_out *out);
void ofc_flows_reply(struct ofc_flow_req *r, const struct of_session *s, const struct of_msg *m);

struct ofc_apps;

/* Makes the network view (tables sized for max_entries links and hosts) and the app list from a
 * comma-separated list ("learning,topology,hosts"). Call from a QSBR-registered thread. */
struct ofc_apps *ofc_apps_create(const char *list, unsigned max_entries, char *err,
				 size_t errlen);
void ofc_apps_free(struct ofc_apps *a);
struct ofc_net *ofc_apps_net(struct ofc_apps *a);
/* Adds a user's app at the end of the list. Returns 0 or -ENOSPC. Before start only. */
int ofc_apps_add(struct ofc_apps *a, const struct ofc_app *app);
/* True when some app has an on_packet_in callback. */
bool ofc_apps_want_packet_in(const struct ofc_apps *a);

/* Dispatch, called by ofc_io.c / ofc_learning.c (and by tests). */
/* A message from an UP switch other than PACKET_IN (I/O poller). */
void ofc_apps_control(struct ofc_apps *a, const struct of_session *s, const struct of_msg *m,
		      uint64_t now_ms, struct of_out *out);
/* The switch's connection closed (I/O poller). */
void ofc_apps_switch_down(struct ofc_apps *a, uint64_t dpid);
/* A PACKET_IN in b (handler poller `idx`): the apps' replies go into reply[0..cap) (not
 * overlapping b's data); returns their length (0: nothing to send). */
size_t ofc_apps_packet_in(struct ofc_apps *a, struct ofc_handler *h, unsigned idx,
			  const struct ofc_buf *b, uint64_t now_ms, uint8_t *reply, size_t cap);
/* Timer: true when on_timer is due at now_ms (then call ofc_apps_timer_switch for every
 * connected switch and ofc_apps_timer_done once). */
bool ofc_apps_timer_due(struct ofc_apps *a, uint64_t now_ms);
void ofc_apps_timer_switch(struct ofc_apps *a, uint64_t dpid, uint64_t now_ms,
			   struct of_out *out);
void ofc_apps_timer_done(struct ofc_apps *a, uint64_t now_ms);

/* Monotonic milliseconds / nanoseconds. */
uint64_t ofc_now_ms(void);
uint64_t ofc_now_ns(void);
/* The flow-stats mailbox. */
struct ofc_flow_req *ofc_apps_flows(struct ofc_apps *a);
/* Counts one PACKET_IN whose reply came back after `ns` (I/O poller only). */
void ofc_apps_latency(struct ofc_apps *a, uint64_t ns);

/* Key helpers (big-endian). */
static inline void ofc_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static inline uint64_t ofc_get64(const uint8_t *p)
{
	return (uint64_t)of_get32(p) << 32 | of_get32(p + 4);
}

static inline void ofc_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Removes every link with (dpid, port) at either end; port OFPP_ANY: any port of dpid. */
void ofc_links_remove(struct ofc_net *net, uint64_t dpid, uint32_t port);
/* True when (dpid, port) is an end of a link seen within OFC_LINK_AGE_MS (one lookup). */
bool ofc_links_has_end(struct ofc_net *net, uint64_t dpid, uint32_t port, uint64_t now_ms);
/* Draws the LLDP tag's secret (getrandom). 0 or -errno. */
int ofc_lldp_key_init(struct ofc_net *net);

#endif /* RINGFLOW_OFC_APP_H */
