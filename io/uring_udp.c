/*
 * io/uring_udp.c: uring:udp, the datagram half of the io_uring driver (uring.c has the ring).
 * Receive is one multishot recvmsg whose buffers come from a provided-buffer ring filled with
 * the pool's own packet buffers (the kernel writes the payload at the buffer's usual data
 * offset: no copy); a send is one sendmsg SQE per message, whose msghdr lives in a tx slot
 * until its completion.
 */
#include <errno.h>
#include <string.h>

#include "io_pvt.h"
#include "uring_pvt.h"

/* UDP: the kernel writes io_uring_recvmsg_out and the peer's address just before the payload,
 * so a buffer starts that far below the packet buffer's default data offset. */
unsigned ur_udp_prefix(void)
{
	return (unsigned)sizeof(struct io_uring_recvmsg_out) + UR_NAME_LEN;
}

static void br_add_pkt(struct ur_dev *d, struct rf_pktbuf *b, uint16_t bid, int offset)
{
	uint8_t *addr = (uint8_t *)b->buf_addr + RF_PKTBUF_HEADROOM - ur_udp_prefix();
	unsigned len = b->buf_len - RF_PKTBUF_HEADROOM + ur_udp_prefix();
	d->bufpkt[bid] = b;
	io_uring_buf_ring_add(d->br, addr, len, bid, io_uring_buf_ring_mask(d->nbufs), offset);
}

/* Gives packet buffers to the bids that lack one. Returns how many were added. */
unsigned ur_br_refill_udp(struct ur_dev *d)
{
	unsigned added = 0;
	while (d->nmissing) {
		struct rf_pktbuf *b = rf_pktbuf_alloc(d->pool);
		if (!b)
			break;
		br_add_pkt(d, b, d->missing[--d->nmissing], (int)added);
		added++;
	}
	if (added)
		io_uring_buf_ring_advance(d->br, (int)added); /* store-release of the tail inside */
	return added;
}

int ur_arm_udp_rx(struct ur_dev *d)
{
	struct io_uring_sqe *sqe = ur_sqe(d);
	if (!sqe)
		return -EBUSY;
	memset(&d->rx_msg, 0, sizeof(d->rx_msg));
	d->rx_msg.msg_namelen = UR_NAME_LEN;
	if (d->multishot) {
		io_uring_prep_recvmsg_multishot(sqe, d->fd, &d->rx_msg, 0);
	} else {
		d->rx_msg.msg_name = &d->rx_name;
		io_uring_prep_recvmsg(sqe, d->fd, &d->rx_msg, 0);
	}
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = UR_BGID;
	io_uring_sqe_set_data64(sqe, ud(UR_RX, 0, 0));
	d->rx_armed = true;
	return 0;
}

void ur_udp_rx_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	if (!(cqe->flags & IORING_CQE_F_MORE))
		d->rx_armed = false;
	if (cqe->res < 0) {
		if (cqe->res == -ENOBUFS)
			ur_stat_add(&d->rx_nobuf, 1);
		else if (cqe->res == -EINVAL && d->multishot) {
			d->multishot = false;
			ur_say_once_single_shot("the kernel rejected multishot recvmsg");
		}
		return;
	}
	if (!(cqe->flags & IORING_CQE_F_BUFFER))
		return;
	uint16_t bid = (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
	struct rf_pktbuf *b = d->bufpkt[bid];
	d->bufpkt[bid] = NULL;
	d->missing[d->nmissing++] = bid;
	if (!b)
		return;
	uint8_t *start = (uint8_t *)b->buf_addr + RF_PKTBUF_HEADROOM - ur_udp_prefix();
	unsigned buflen = b->buf_len - RF_PKTBUF_HEADROOM + ur_udp_prefix();
	const uint8_t *payload;
	unsigned plen;
	if (d->multishot) {
		struct io_uring_recvmsg_out *o =
			io_uring_recvmsg_validate(start, cqe->res, &d->rx_msg);
		if (!o || (o->flags & MSG_TRUNC)) {
			ur_stat_add(&d->rx_drops, 1);
			rf_pktbuf_free(b);
			return;
		}
		payload = io_uring_recvmsg_payload(o, &d->rx_msg);
		plen = io_uring_recvmsg_payload_length(o, cqe->res, &d->rx_msg);
		unsigned nl = o->namelen < UR_NAME_LEN ? o->namelen : UR_NAME_LEN;
		memcpy(&b->peer, io_uring_recvmsg_name(o), nl);
		b->peer_len = nl;
	} else {
		if ((unsigned)cqe->res > buflen || (d->rx_msg.msg_flags & MSG_TRUNC)) {
			ur_stat_add(&d->rx_drops, 1);
			rf_pktbuf_free(b);
			return;
		}
		payload = start;
		plen = (unsigned)cqe->res;
		unsigned nl = d->rx_msg.msg_namelen < UR_NAME_LEN ? d->rx_msg.msg_namelen : UR_NAME_LEN;
		memcpy(&b->peer, &d->rx_name, nl);
		b->peer_len = nl;
	}
	b->data_off = (uint32_t)(payload - (const uint8_t *)b->buf_addr);
	b->data_len = plen;
	b->flow = 0;
	b->queue = 0;
	ur_stage_push(d, b);
}

void ur_udp_send_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	uint32_t slot = ud_slot(cqe->user_data);
	if (slot >= d->ntx || !d->tx[slot].pkt)
		return;
	if (cqe->res < 0)
		ur_stat_add(&d->tx_drops, 1);
	rf_pktbuf_free(d->tx[slot].pkt);
	d->tx[slot].pkt = NULL;
	d->txfree[d->ntxfree++] = slot;
}

unsigned ur_udp_tx(struct ur_dev *d, struct rf_pktbuf **pkts, unsigned n, uint64_t *sent,
		   uint64_t *bytes)
{
	unsigned k = 0;
	for (; k < n; k++) {
		if (!d->ntxfree)
			break; /* every slot in flight: the caller keeps the rest */
		struct rf_pktbuf *b = pkts[k];
		struct io_uring_sqe *sqe = ur_sqe(d);
		if (!sqe)
			break;
		uint32_t slot = d->txfree[--d->ntxfree];
		struct ur_txslot *t = &d->tx[slot];
		t->pkt = b;
		t->iov.iov_base = rf_pktbuf_data(b);
		t->iov.iov_len = b->data_len;
		memset(&t->msg, 0, sizeof(t->msg));
		t->msg.msg_iov = &t->iov;
		t->msg.msg_iovlen = 1;
		if (!d->connected) {
			t->msg.msg_name = &b->peer;
			t->msg.msg_namelen = b->peer_len;
		}
		io_uring_prep_sendmsg(sqe, d->fd, &t->msg, MSG_NOSIGNAL);
		io_uring_sqe_set_data64(sqe, ud(UR_USEND, 0, slot));
		*bytes += b->data_len;
		(*sent)++;
	}
	return k;
}
