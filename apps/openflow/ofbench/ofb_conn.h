/*
 * apps/openflow/ofbench/ofb_conn.h: one non-blocking OpenFlow TCP connection with a receive
 * buffer that reassembles partial messages (through of_frame) and a send buffer drained
 * whenever the socket takes more. Used by both sides of ofbench (generator and responder).
 */
#ifndef RINGFLOW_OFB_CONN_H
#define RINGFLOW_OFB_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "of.h"

#define OFB_RX_CAP (256u * 1024)
#define OFB_TX_CAP (1024u * 1024)

struct ofb_conn {
	int fd;
	struct of_framer framer;
	uint8_t *rx;
	size_t rx_len, rx_off; /* unread bytes are rx[rx_off..rx_len) */
	uint8_t *tx;
	size_t tx_len, tx_off; /* unsent bytes are tx[tx_off..tx_len) */
};

/* Allocates the buffers; fd is owned from now on. Returns 0 or -ENOMEM. */
int ofb_conn_init(struct ofb_conn *c, int fd);
void ofb_conn_close(struct ofb_conn *c);

/* Reads what the socket has. Returns bytes read (0: nothing now), or -1 on EOF/error. */
long ofb_conn_read(struct ofb_conn *c);

/* Next complete message: 1 with *msg and *len set (valid until the next read), 0 when more bytes
 * are needed, -1 when the stream must be closed (a fault with close set; *fault says why).
 * A message with a fault that does not close is returned as well, with *bad set to 1. */
int ofb_conn_next(struct ofb_conn *c, const uint8_t **msg, size_t *len, int *bad,
		  struct of_fault *fault);

/* Space to build the next outgoing message in place: returns a pointer to at least `need`
 * free bytes, or NULL when the send buffer is that full. Commit with ofb_conn_commit. */
uint8_t *ofb_conn_reserve(struct ofb_conn *c, size_t need, size_t *room);
void ofb_conn_commit(struct ofb_conn *c, size_t n);

/* Writes what the socket takes. Returns 0, or -1 on error. */
int ofb_conn_flush(struct ofb_conn *c);

/* Bytes waiting to be sent. */
static inline size_t ofb_conn_pending(const struct ofb_conn *c)
{
	return c->tx_len - c->tx_off;
}

#endif
