/*
 * io/uring_pvt.h: what the io_uring driver's three files share: the device (one ring, its
 * provided buffers, the stage of received messages), the request tags, and the calls between
 * uring.c (ring, buffers, completion dispatch, ops), uring_udp.c and uring_tcp.c.
 */
#ifndef RINGFLOW_IO_URING_PVT_H
#define RINGFLOW_IO_URING_PVT_H

#include <liburing.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "stream_pvt.h"

#define UR_BGID 7              /* buffer group id of the provided-buffer ring */
#define UR_TCP_BUF 4096        /* bytes per provided buffer (TCP) */
#define UR_TCP_IN_CAP (1u << 17)  /* reassembly bytes per connection: > one max frame + buffer */
#define UR_TCP_OUT_CAP (1u << 18) /* framed bytes waiting to be sent per connection */
#define UR_STAGE 512           /* received messages reaped but not yet handed out */
#define UR_NAME_LEN ((unsigned)sizeof(struct sockaddr_in6))
#define UR_TCP_KEYS "bind,busy_poll,nodelay,max_conns,timeout_ms," RF_STREAM_KEYS

/* user_data: kind in the top byte, connection generation, then a slot index. */
enum ur_kind { UR_RX = 1, UR_ACCEPT, UR_TRECV, UR_TSEND, UR_USEND, UR_CANCEL };
static inline uint64_t ud(enum ur_kind k, uint32_t gen, uint32_t slot)
{
	return (uint64_t)k << 56 | (uint64_t)(gen & 0xffffffu) << 32 | slot;
}
static inline enum ur_kind ud_kind(uint64_t u) { return (enum ur_kind)(u >> 56); }
static inline uint32_t ud_gen(uint64_t u) { return (uint32_t)(u >> 32) & 0xffffffu; }
static inline uint32_t ud_slot(uint64_t u) { return (uint32_t)u; }

struct ur_conn {
	int fd;            /* -1: slot free */
	uint32_t gen;      /* bumped on reuse, so stale completions and flows are recognised */
	bool recv_armed, send_inflight;
	bool closing;      /* being closed: the last completion closes the fd */
	bool eof;          /* no more input (peer closed, reset, bad frame or the app's CLOSE):
			    * closed once the output is sent and the input handed over */
	bool up_owed;      /* events: CONN_UP not handed over yet */
	bool touched;      /* on the device's touched list (tx_burst sends it) */
	uint8_t *in;       /* reassembly of the byte stream: [in_head, in_tail) */
	uint32_t in_head, in_tail;
	uint32_t *pend;    /* received buffers not yet copied in (in was full): bid << 16 | len */
	unsigned pend_head, npend;
	uint8_t *out;      /* framed bytes to send: [out_head, out_tail) */
	uint32_t out_head, out_tail, out_sending;
	struct sockaddr_storage peer;
	socklen_t peer_len;
};

struct ur_txslot {        /* one UDP sendmsg in flight: its msghdr must outlive the SQE */
	struct msghdr msg;
	struct iovec iov;
	struct rf_pktbuf *pkt;
};

struct ur_dev {
	struct io_uring ring;
	bool ring_ok, tcp, listen, sqpoll, multishot, rx_armed, coop;
	int fd;                            /* UDP socket, TCP listener, or TCP client socket */
	struct rf_io_dev *dev;
	struct rf_pktbuf_pool *pool;
	/* provided-buffer ring */
	struct io_uring_buf_ring *br;
	size_t br_bytes;
	unsigned nbufs;
	bool br_registered;
	struct rf_pktbuf **bufpkt;         /* UDP: bid -> the packet buffer behind it (NULL: empty) */
	unsigned nmissing;                 /* UDP: bids waiting for a packet buffer */
	uint16_t *missing;
	uint8_t *tcpmem;                   /* TCP: nbufs * UR_TCP_BUF bytes */
	struct msghdr rx_msg;              /* recvmsg template (multishot: only namelen matters) */
	struct sockaddr_storage rx_name;   /* single-shot recvmsg: where the peer address lands */
	/* UDP sends */
	struct ur_txslot *tx;
	uint32_t *txfree;
	unsigned ntx, ntxfree;
	bool connected;                    /* UDP connect= (sends ignore pkt->peer) */
	/* TCP (uring_tcp.c) */
	struct rf_stream_cfg sc;
	struct ur_conn *conns;             /* max_conns slots (1 when connecting) */
	unsigned max_conns, nconns;
	unsigned conns_hi;                 /* slots [0, conns_hi) were ever used: loops stop there */
	unsigned *touched, ntouched;       /* connections given bytes in this tx_burst */
	struct rf_stream_downs downs;      /* events: CONN_DOWN owed */
	bool accept_armed;
	unsigned rr;                       /* next connection rx_burst cuts messages from */
	/* received, not yet handed out */
	struct rf_pktbuf *stage[UR_STAGE];
	unsigned stage_head, stage_n;
	unsigned unsubmitted;              /* SQEs prepared since the last submit */
	atomic_uint_fast64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes, rx_nobuf, rx_drops, tx_drops,
		conns_open, conns_total;
};

/* uring.c */
void ur_stat_add(atomic_uint_fast64_t *c, uint64_t v);
void ur_say_once_single_shot(const char *why);
int ur_submit(struct ur_dev *d);
struct io_uring_sqe *ur_sqe(struct ur_dev *d);
void ur_stage_push(struct ur_dev *d, struct rf_pktbuf *b);

/* uring_udp.c */
unsigned ur_udp_prefix(void);
unsigned ur_br_refill_udp(struct ur_dev *d);
int ur_arm_udp_rx(struct ur_dev *d);
void ur_udp_rx_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe);
void ur_udp_send_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe);
/* Queues pkts[0..n) as sendmsg SQEs; returns how many were taken; adds sent/bytes. */
unsigned ur_udp_tx(struct ur_dev *d, struct rf_pktbuf **pkts, unsigned n, uint64_t *sent,
		   uint64_t *bytes);

/* uring_tcp.c */
/* Parses the TCP keys, opens the listener or the connection (d->ring is up, buffers not yet):
 * 0 or -errno with one line in err. */
int ur_tcp_open(struct ur_dev *d, const struct rf_io_config *cfg, char *err, size_t len);
void ur_tcp_start(struct ur_dev *d); /* arms accept or the connection's receive */
void ur_br_give_back_tcp(struct ur_dev *d, uint16_t bid);
void ur_accept_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe);
void ur_tcp_recv_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe);
void ur_tcp_send_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe);
void ur_tcp_rearm(struct ur_dev *d); /* after a reap: accept again if there is room */
unsigned ur_tcp_rx(struct ur_dev *d, struct rf_pktbuf **pkts, unsigned n);
unsigned ur_tcp_tx(struct ur_dev *d, struct rf_pktbuf **pkts, unsigned n);
bool ur_tcp_ready(struct ur_dev *d); /* rx_burst has something without a new completion */
void ur_tcp_free(struct ur_dev *d);

#endif /* RINGFLOW_IO_URING_PVT_H */
