/*
 * apps/openflow/ofbench/ofb.h: ringflow-ofbench, a cbench-style OpenFlow load generator,
 * and the trivial responder it is calibrated against. Internal to the tool (and its test).
 *
 * The generator emulates N switches, each a TCP connection that does the HELLO/FEATURES
 * handshake as a switch would and answers ECHO/BARRIER, then sends PACKET_INs carrying
 * Ethernet frames with M distinct source MACs (cbench's pattern: src cycles over the M
 * hosts of that switch, dst is the next host, so a learning switch soon knows every dst).
 * A response is a PACKET_OUT, or a FLOW_MOD naming the PACKET_IN's buffer_id; responses are
 * matched to their PACKET_IN by buffer_id (or, with --no-buffer, by a sequence number the
 * frame carries), which gives each one a round-trip time.
 *   throughput  up to --window PACKET_INs outstanding per switch; responses per second
 *   latency     one outstanding PACKET_IN per switch; RTT histogram
 *   rate        open loop: --rate PACKET_INs per second in total, sent on schedule whatever
 *               the answers; latency measured from the scheduled send time; loss counted
 * One thread, one epoll set, busy-polling (epoll_wait with timeout 0): on this VM waking an
 * idle vCPU costs ~40 us, which would swamp the figure (see TESTBED.md).
 * Errors: functions return 0 or a negative errno and leave a one-line reason in err.
 */
#ifndef RINGFLOW_OFB_H
#define RINGFLOW_OFB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <ringflow/stats.h>

/* Live counters for the control socket and --metrics (ofbench.c registers them in its stats
 * registry): the generator's or the responder's one thread writes them (ofb_live_add, a
 * relaxed load + store), the control thread reads them. NULL where the tool runs without. */
struct ofb_live {
	_Atomic uint64_t switches_up; /* gauge: connections that finished the handshake (open, responder) */
	_Atomic uint64_t packet_ins;  /* PACKET_INs sent (generator) or received (responder), warm-up included */
	_Atomic uint64_t responses;   /* answers matched (generator) or PACKET_OUTs sent (responder) */
	_Atomic uint64_t errors;      /* OpenFlow ERRORs received */
	_Atomic uint64_t rounds;      /* rounds finished, warm-up included (generator) */
	struct rf_stats_hist rtt;     /* round-trip time of each matched answer, ns (generator) */
};

/* Add n to counter `field` of live counters l (its one writer only: a relaxed load + store,
 * no read-modify-write); nothing when l is NULL. */
#define OFB_LIVE_ADD(l, field, n)                                                            \
	do {                                                                                 \
		struct ofb_live *l_ = (l);                                                   \
		if (l_)                                                                      \
			atomic_store_explicit(&l_->field,                                    \
					      atomic_load_explicit(&l_->field,               \
								   memory_order_relaxed) + (n), \
					      memory_order_relaxed);                         \
	} while (0)

/* Zero l and set up its RTT histogram (1 us .. ~8 s, doubling; seconds in Prometheus). */
void ofb_live_init(struct ofb_live *l);

enum ofb_mode { OFB_THROUGHPUT, OFB_LATENCY, OFB_RATE };

#define OFB_MAX_MORE 7 /* controllers past the first */

struct ofb_opts {
	const char *host; /* the (first) controller */
	uint16_t port;
	/* further controllers (--controller A,B,..): switch i connects to controller
	 * i % (1 + n_more), controller 0 being host:port */
	unsigned n_more;
	const char *more_host[OFB_MAX_MORE];
	uint16_t more_port[OFB_MAX_MORE];
	enum ofb_mode mode;
	unsigned switches; /* -s: emulated switches (connections) */
	unsigned macs;     /* -M: distinct source MACs per switch */
	unsigned window;   /* throughput mode: outstanding PACKET_INs per switch */
	unsigned loops;    /* -l: measured rounds */
	unsigned warmup;   /* -w: rounds run first and not counted */
	double round_s;    /* -t: seconds per round */
	double rate;       /* rate mode: PACKET_IN/s over all switches */
	uint8_t version;   /* -O: OF_VERSION_1_3 (default) or OF_VERSION_1_0 */
	bool no_buffer;    /* --no-buffer: n_buffers=0, buffer_id NO_BUFFER, data in PACKET_OUT */
	struct ofb_live *live; /* live counters to keep, or NULL */
};

/* Log-linear latency histogram in ns: 16 sub-buckets per power of two (<= 6.25 % error). */
#define OFB_HIST_BUCKETS (48 * 16)
struct ofb_hist {
	uint64_t count, sum_ns, max_ns, min_ns;
	uint64_t b[OFB_HIST_BUCKETS];
};

void ofb_hist_add(struct ofb_hist *h, uint64_t ns);
/* Value at quantile q (0..1), as the upper edge of its bucket; 0 if empty. */
uint64_t ofb_hist_quantile(const struct ofb_hist *h, double q);

#define OFB_MAX_ROUNDS 64
#define OFB_GEN_STALL_NS 100000u /* a busy-loop gap longer than this is a generator stall */
struct ofb_result {
	unsigned rounds;
	double per_s[OFB_MAX_ROUNDS];  /* answers per second within each measured round */
	struct ofb_hist rtt;           /* RTT of each PACKET_IN sent in a measured round */
	uint64_t sent, responses;      /* PACKET_INs sent in measured rounds, and answered */
	uint64_t flow_mods, packet_outs; /* messages received during measured rounds */
	uint64_t lost;                 /* measured PACKET_INs not answered (2 s drain at the end) */
	uint64_t behind;               /* rate mode: sends that ran late by > 1 ms (backlog) */
	/* Rate mode: how late each measured send was against its schedule. */
	uint64_t late_sum_ns, late_max_ns, late_count;
	/* Generator stalls: gaps > OFB_GEN_STALL_NS between two successive timestamps of the
	 * busy loop, i.e. the generator thread was not running (descheduled, host steal) or
	 * (rarely) busy; counted during measured rounds. */
	uint64_t gen_stalls, gen_stall_max_ns, gen_stall_sum_ns;
	/* RTT samples whose [scheduled send, answer read] spans a generator stall, and the
	 * largest RTT among the others: the maximum with the generator's own stalls taken out.
	 * The rtt histogram above still holds every sample. */
	uint64_t rtt_samples_stalled, rtt_max_clean_ns;
	uint64_t errors_received;      /* OpenFlow ERRORs the controller sent */
	uint8_t version;               /* negotiated */
	double seconds;                /* measured time */
};

/* Connects o->switches switches, handshakes, runs warm-up and measured rounds, closes.
 * Returns 0, or a negative errno with a one-line reason in err[0..errlen). */
int ofb_run(const struct ofb_opts *o, struct ofb_result *r, char *err, unsigned errlen);

/* ---- the trivial responder (--responder) ---- */

/* Listens on host:port (port 0: any); returns the fd and the bound port, or -errno. */
int ofb_responder_listen(const char *host, uint16_t port, uint16_t *bound);

/* Serves controller-side: HELLO (1.3 and 1.0), FEATURES_REQUEST, the 1.3 table-miss entry,
 * ECHO; every PACKET_IN gets one PACKET_OUT (flood, buffer_id echoed, data when unbuffered).
 * Runs until *stop is set or max_s seconds pass (0: no limit). busy: spin instead of
 * blocking in epoll_wait. live: counters to keep, or NULL. Returns 0 or -errno. Closes
 * listen_fd. */
int ofb_responder_run(int listen_fd, double max_s, bool busy, atomic_bool *stop,
		      struct ofb_live *live);

/* Monotonic time in ns. */
uint64_t ofb_now_ns(void);

#endif /* RINGFLOW_OFB_H */
