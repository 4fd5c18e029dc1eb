/*
 * apps/openflow/controller/ctl.h: ringflow-controller's internals (first version: learning
 * switch). Follow one PACKET_IN:
 *   ctl_io.c       the I/O poller (runtime poller 0) owns every switch socket: epoll,
 *                  non-blocking reads, of_session (handshake, setup, echo, faults); an app
 *                  message is copied into a buffer from the mempool and enqueued on the SPSC
 *                  ring of the handler chosen by datapath id (one switch: one handler, so its
 *                  messages stay in order)
 *   ctl_learning.c a handler poller dequeues it, runs the learning switch (MAC table in the
 *                  lock-free hash, keyed by datapath id + MAC), writes the reply into the same
 *                  buffer and enqueues it on its SPSC ring back to the I/O poller
 *   ctl_io.c       the I/O poller appends the reply to the connection's send buffer, sends
 *                  it, and returns the buffer to the pool
 * No lock on this path: the rings are single-producer single-consumer, the buffers come from
 * the I/O poller's pool cache, the hash is lock-free (QSBR: pollers are quiescent each loop).
 * Under --idle adaptive, whoever fills a ring wakes the poller that empties it
 * (rf_runtime_wake), so a blocked poller does not sit on a message until its timeout.
 */
#ifndef RINGFLOW_CTL_H
#define RINGFLOW_CTL_H

#include <stdatomic.h>
#include <stdint.h>

#include <ringflow/hash.h>
#include <ringflow/mempool.h>
#include <ringflow/ring.h>
#include <ringflow/runtime.h>

#define CTL_MAX_HANDLERS 16
#define CTL_BUF_SIZE 4096
#define CTL_BUF_DATA (CTL_BUF_SIZE - 32)
#define CTL_RING_SIZE 4096

/* A message between the I/O poller and a handler (a mempool object). */
struct ctl_buf {
	uint32_t conn;      /* connection slot */
	uint32_t gen;       /* slot generation: a reply to a closed connection is dropped */
	uint64_t dpid;
	uint8_t version;
	uint16_t len;       /* bytes in data: one message in, zero or more replies out */
	uint64_t t_ns;      /* hand-off time (apps only: the latency histogram), else 0 */
	uint8_t data[CTL_BUF_DATA];
};

struct ctl_handler {
	struct rf_ring *in;  /* I/O poller -> handler */
	struct rf_ring *out; /* handler -> I/O poller */
	struct rf_hash *macs; /* shared by all handlers: (dpid, MAC) -> port + 1 */
	_Atomic uint64_t packet_ins, flow_mods, packet_outs, floods;
	struct ctl_apps *apps; /* the --app list (ctl_app.h); NULL: learning switch only */
	unsigned index;        /* this handler's number */
	unsigned poller;       /* the runtime poller it runs on (rf_runtime_wake) */
	struct rf_runtime *rt; /* to wake the I/O poller (poller 0) after replies */
};

struct ctl_io;
struct ctl_apps;

/* Opens the listening socket and the I/O state. Returns NULL with one line in err. */
struct ctl_io *ctl_io_create(const char *host, uint16_t port, struct rf_mempool *pool,
			     struct ctl_handler *handlers, unsigned n_handlers, char *err,
			     size_t errlen);
void ctl_io_free(struct ctl_io *io);
/* Hands control messages, switch up/down and the timer to the apps (before start). */
void ctl_io_set_apps(struct ctl_io *io, struct ctl_apps *apps);
int ctl_io_wait_fd(const struct ctl_io *io);
unsigned ctl_io_switches(const struct ctl_io *io);

/* Poll functions (rf_poll_fn). */
unsigned ctl_io_poll(struct rf_poller *p, void *arg);
unsigned ctl_learning_poll(struct rf_poller *p, void *arg);

#endif /* RINGFLOW_CTL_H */
