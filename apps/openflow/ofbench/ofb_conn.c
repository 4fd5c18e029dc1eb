/*
 * apps/openflow/ofbench/ofb_conn.c: buffered non-blocking OpenFlow connection (see
 * ofb_conn.h). The receive buffer is compacted only when a message would not fit behind
 * the unread bytes, so the common case is no copy at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ofb_conn.h"

int ofb_conn_init(struct ofb_conn *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->rx = malloc(OFB_RX_CAP);
	c->tx = malloc(OFB_TX_CAP);
	if (!c->rx || !c->tx) {
		ofb_conn_close(c);
		return -ENOMEM;
	}
	return 0;
}

void ofb_conn_close(struct ofb_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->rx);
	free(c->tx);
	c->rx = c->tx = NULL;
}

long ofb_conn_read(struct ofb_conn *c)
{
	if (c->rx_off == c->rx_len) {
		c->rx_off = c->rx_len = 0;
	} else if (OFB_RX_CAP - c->rx_len < OF_MAX_MSG_LEN) {
		memmove(c->rx, c->rx + c->rx_off, c->rx_len - c->rx_off);
		c->rx_len -= c->rx_off;
		c->rx_off = 0;
	}
	if (c->rx_len == OFB_RX_CAP)
		return 0; /* full of unconsumed messages: leave the rest in the socket */
	ssize_t n = recv(c->fd, c->rx + c->rx_len, OFB_RX_CAP - c->rx_len, MSG_DONTWAIT);
	if (n > 0) {
		c->rx_len += (size_t)n;
		return n;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	return -1;
}

int ofb_conn_next(struct ofb_conn *c, const uint8_t **msg, size_t *len, int *bad,
		  struct of_fault *fault)
{
	struct of_frame f;
	of_frame(&c->framer, c->rx + c->rx_off, c->rx_len - c->rx_off, &f);
	*bad = 0;
	if (f.kind == OF_FRAME_NEED_MORE)
		return 0;
	if (f.kind == OF_FRAME_BAD) {
		*fault = f.fault;
		if (f.fault.close)
			return -1;
		*bad = 1;
	}
	*msg = c->rx + c->rx_off;
	*len = f.len;
	c->rx_off += f.len;
	return 1;
}

uint8_t *ofb_conn_reserve(struct ofb_conn *c, size_t need, size_t *room)
{
	if (c->tx_off == c->tx_len) {
		c->tx_off = c->tx_len = 0;
	} else if (OFB_TX_CAP - c->tx_len < need && c->tx_off > 0) {
		memmove(c->tx, c->tx + c->tx_off, c->tx_len - c->tx_off);
		c->tx_len -= c->tx_off;
		c->tx_off = 0;
	}
	if (OFB_TX_CAP - c->tx_len < need)
		return NULL;
	*room = OFB_TX_CAP - c->tx_len;
	return c->tx + c->tx_len;
}

void ofb_conn_commit(struct ofb_conn *c, size_t n)
{
	c->tx_len += n;
}

int ofb_conn_flush(struct ofb_conn *c)
{
	while (c->tx_off < c->tx_len) {
		ssize_t n = send(c->fd, c->tx + c->tx_off, c->tx_len - c->tx_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			c->tx_off += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		return -1;
	}
	return 0;
}
