/*
 * apps/ofswitch/sw_agent_pvt.h: what the agent's files share (the agent: one thread, the
 * OpenFlow side of ringflow-switch). sw_agent.c has the connections and the message
 * dispatch, sw_agent_flow.c FLOW_MOD, the master list and expiry, sw_agent_stats.c the
 * multipart replies and PORT_STATUS, sw_agent_pkt.c PACKET_IN and PACKET_OUT (rate limited:
 * sw_pinrate.c), sw_agent_obs.c its counters for the control socket; each connection's
 * output waits in its bounded queue (sw_out.c) when the socket is full. Everything
 * here runs on the agent thread only (the control thread reads only the relaxed counters
 * and gauges, through sw_agent_obs.c); the pollers share nothing with it but struct sw_dp
 * (sw.h).
 */
#ifndef RINGFLOW_APPS_SW_AGENT_PVT_H
#define RINGFLOW_APPS_SW_AGENT_PVT_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/pktbuf.h>
#include <ringflow/qsbr.h>

#include "sw.h"
#include "sw_meter.h"
#include "sw_pinrate.h"
#include "sw_group.h"
#include "sw_offload.h"
#include "sw_out.h"


/* Error types/codes not in of.h (OpenFlow 1.3 wire values). */
#define OFPBRC_BAD_EXPERIMENTER 3
#define OFPBRC_BUFFER_UNKNOWN 8
#define OFPBRC_BAD_TABLE_ID 9
#define OFPBRC_MULTIPART_BUFFER_OVERFLOW 13
#define OFPBMC_BAD_FIELD 6
#define OFPET_FLOW_MOD_FAILED 5
#define OFPFMFC_TABLE_FULL 1
#define OFPFMFC_OVERLAP 3
#define OFPFF_CHECK_OVERLAP 0x2
#define OFPRR_IDLE_TIMEOUT 0
#define OFPRR_HARD_TIMEOUT 1
#define OFPRR_DELETE 2
#define OFPFMFC_BAD_COMMAND 6
#define OFPFMFC_BAD_FLAGS 7
#define OFPFMFC_BAD_TABLE_ID 9
#define OFPPS_LINK_DOWN 1
#define OFPPR_MODIFY 2
#define OFPMP13_TABLE_FEATURES 12
#define OFPPR_ADD 0
#define CONNECT_TIMEOUT_NS 5000000000ull /* a connect() not done by then failed */
#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 8000
#define OFPR_NO_MATCH 0
#define OFPR_ACTION 1
#define OF_VERSION_BIT (1u << OF_VERSION_1_3)
#define RBUF (2 * OF_MAX_MSG_LEN + 4096)
#define WBUF (OF_MAX_MSG_LEN + 1)
#define STATS_PER_MSG 32 /* an entry with both action lists full is about 1.5 KiB: 32 fit WBUF */
/* A FLOW dump makes its next part only while less than this waits in the connection's queue:
 * a dump of any table costs at most this plus one part (WBUF), not the whole reply. */
#define SW_DUMP_LOW (256u << 10)
#define IDX_BUCKETS (2u * SW_MAX_FLOWS) /* the agent's index: a power of two */

/* A FLOW stats request being answered part by part (sw_agent_stats.c): the request and the
 * next flow of the master list to look at (NULL: the last part is out). The agent reads no
 * more requests from the connection until the last part is queued, so replies keep their
 * order; a flow removed meanwhile moves the cursor to its successor (dump_forget). */
struct sw_dump {
	bool on;
	uint32_t xid;
	struct of_mp_request req;
	struct sw_key v, mk; /* req's match as a key and mask */
	struct sw_flow *next;
};

/* One OpenFlow connection: conns[i] for --controller i (i < ncontrollers), the slots after
 * them for --listen clients. */
struct sw_conn {
	int fd;
	uint8_t version; /* 0 until HELLO negotiated */
	bool connecting; /* a non-blocking connect() in progress (controllers only) */
	int ctl;         /* index of its --controller, or -1: a --listen client */
	size_t rlen;
	uint64_t last_rx_ns, last_echo_ns;
	uint64_t next_try_ns, connect_ns; /* controllers: next attempt, start of this one */
	uint32_t backoff_ms;              /* controllers: the current backoff */
	uint16_t miss_send_len;           /* SET_CONFIG, per connection (as OVS) */
	bool async_on; /* listener clients: async messages only after SET_CONFIG/SET_ASYNC */
	struct sw_async async;
	/* PACKET_IN: the rate limit (a new bucket each session) and what became of them, over
	 * every session of this slot (agent writes, relaxed: one writer; the control socket
	 * and --metrics read them, sw_agent_obs.c). */
	struct sw_pinrate pin;
	_Atomic uint64_t pin_sent, pin_drop_rate, pin_drop_busy;
	/* Sessions of this slot closed because the controller did not read: its queued output
	 * would pass its hard bound, or did not move for an echo interval (same writer and readers
	 * as the PACKET_IN counters). */
	_Atomic uint64_t closed_unread;
	struct sw_out out; /* what the socket did not take yet (sw_out.h) */
	struct sw_dump dump; /* a FLOW dump in progress */
	uint8_t rbuf[RBUF];
};

#define SW_MAX_LISTENERS 4 /* --listen clients (ovs-ofctl) */
#define SW_MAX_CONNS (SW_MAX_CONTROLLERS + SW_MAX_LISTENERS)

struct sw_agent {
	struct sw_dp *dp;
	struct sw_conn conns[SW_MAX_CONNS];
	int link[SW_MAX_PORTS]; /* last link state seen (rf_io_link_up), for PORT_STATUS */
	int lfd; /* --listen socket, or -1 */
	struct sw_agent_cfg cfg;
	struct sockaddr_in ctl[SW_MAX_CONTROLLERS];
	uint32_t roles[SW_MAX_CONNS]; /* OFPCR_ROLE_* of each connection (0 when closed) */
	struct sw_roles role_state;   /* the generation id */
	uint64_t rng;                 /* xorshift state for the backoff jitter */
	struct sw_flow *flows;
	unsigned nflows;
	struct sw_flow **idx; /* IDX_BUCKETS chains: ADD and *_STRICT find a flow in O(1) */
	bool dirty;
	uint16_t cfg_flags;
	uint32_t xid;
	uint64_t last_timer_ns;
	uint8_t wbuf[WBUF];
	struct of_flow_stats fs[STATS_PER_MSG];
	struct sw_meters meters; /* sw_meter.h (issue 25) */
	/* Gauges for the control socket and --metrics (sw_agent_obs.c): the classifier's
	 * subtables and the flows; the agent stores them every loop (relaxed: plain values). */
	_Atomic uint64_t g_subtables, g_flows;
	uint64_t last_obs_ns; /* the last --stats-interval line */
};

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* sw_agent.c: sending and the connections' async config. send_bytes never waits: what the
 * socket does not take is queued (c->out); a connection whose queue would pass its hard
 * bound is closed and counted (closed_unread). */
void conn_close(struct sw_agent *a, struct sw_conn *c, const char *why);
void send_bytes(struct sw_agent *a, struct sw_conn *c, const uint8_t *b, ssize_t n);
void send_error(struct sw_agent *a, struct sw_conn *c, uint32_t xid, uint16_t type, uint16_t code,
		const uint8_t *msg, size_t len);
bool wants(struct sw_agent *a, struct sw_conn *c, unsigned kind, uint8_t reason);

/* sw_agent_flow.c: the table, FLOW_MOD, the meters' and groups' effects on flows, expiry,
 * and the match tests the stats requests share. */
void retire(struct sw_agent *a, void *p, int kind);
int publish(struct sw_agent *a);
bool covered(const struct sw_flow *f, const struct sw_key *v, const struct sw_key *mk);
bool outputs_to(const struct sw_flow *f, uint32_t port);
bool to_group(const struct sw_flow *f, uint32_t group);
bool cookie_ok(const struct sw_flow *f, uint64_t cookie, uint64_t mask);
void flow_mod(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m, const uint8_t *raw,
	      size_t len);
void meter_msg(struct sw_agent *a, struct sw_conn *c, const struct of_mmsg *mm,
	       const uint8_t *b, size_t len);
bool group_msg(struct sw_agent *a, struct sw_conn *c, const uint8_t *b, size_t len);
void flow_expire(struct sw_agent *a, uint64_t now);

/* sw_agent_stats.c: multipart replies, TABLE_FEATURES, PORT_STATUS. mp_flow starts a FLOW
 * dump; dump_more queues its next parts while c's queue is under SW_DUMP_LOW (the agent's
 * loop calls it for every connection with a dump on); dump_forget moves every dump's cursor
 * off flow f (leaving the master list) to succ. */
void mp_flow(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m);
void dump_more(struct sw_agent *a, struct sw_conn *c);
void dump_forget(struct sw_agent *a, const struct sw_flow *f, struct sw_flow *succ);
void mp_ports(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m);
void mp_aggregate(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x);
void mp_table(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x);
void mp_desc(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x);
void table_features(struct sw_agent *a, struct sw_conn *c, uint32_t xid);
void port_status_check(struct sw_agent *a);

/* sw_agent_pkt.c: frames to and from the controller. */
void packet_out(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m, const uint8_t *raw,
		size_t len);
void drain_to_ctl(struct sw_agent *a);
/* Room in c's socket for n more bytes now, without blocking (nothing queued in c->out, the
 * socket's send queue below half of its buffer): a PACKET_IN that does not fit is dropped,
 * not waited for, and never queues behind replies. */
bool conn_has_room(const struct sw_conn *c, size_t n);

/* sw_agent_obs.c: the counters and gauges above, for the control socket and --metrics;
 * one line of them every --stats-interval (the timers) and when the switch stops. */
void agent_obs_update(struct sw_agent *a);
void agent_obs_print(const struct sw_agent *a);

#endif
