/*
 * io/packet/afp_sock.c: opening one AF_PACKET queue socket for the packet driver (see
 * afp_sock.h for the order of the steps and why). Every failure names the step, the errno
 * and what to do, in one line.
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "io/io_pvt.h"
#include "io/packet/afp_sock.h"

/* Linux 4.20; Debian 12's headers lack the define. */
#ifndef PACKET_FANOUT_FLAG_IGNORE_OUTGOING
#define PACKET_FANOUT_FLAG_IGNORE_OUTGOING 0x4000
#endif

static int sopt(int fd, int level, int name, const void *v, socklen_t l)
{
	return setsockopt(fd, level, name, v, l) == 0 ? 0 : -errno;
}

static int fail(struct rf_afp_sock *s, int rc, char *err, size_t len, const char *what,
		const char *ifname, const char *fix)
{
	rf_io_err(err, len, "packet: %s on %s: %s%s%s", what, ifname, strerror(-rc),
		  fix ? ": " : "", fix ? fix : "");
	rf_afp_sock_close(s);
	return rc;
}

int rf_afp_sock_open(struct rf_afp_sock *s, int ifindex, const char *ifname,
		     struct rf_afp_geom *g, char *err, size_t len)
{
	int one = 1, rc;
	struct tpacket_req3 rx = {0}, tx = {0};
	size_t rx_len = (size_t)g->rx_blocks * g->rx_block_size;
	size_t tx_len = (size_t)g->tx_frames * g->tx_frame_size;

	memset(s, 0, sizeof(*s));
	s->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0); /* protocol 0: nothing arrives yet */
	if (s->fd < 0) {
		rc = -errno;
		s->fd = -1;
		if (rc == -EPERM || rc == -EACCES)
			return fail(s, rc, err, len, "cannot open an AF_PACKET socket", ifname,
				    "run as root or give the binary CAP_NET_RAW "
				    "(setcap cap_net_raw+ep BINARY)");
		return fail(s, rc, err, len, "cannot open an AF_PACKET socket", ifname, NULL);
	}
	if ((rc = sopt(s->fd, SOL_PACKET, PACKET_VERSION, &g->version, sizeof(g->version))))
		return fail(s, rc, err, len, "PACKET_VERSION", ifname,
			    "the kernel needs TPACKET_V3 (Linux >= 3.2)");
	/* A malformed tx slot is skipped (and its status reset) instead of stopping the ring. */
	if ((rc = sopt(s->fd, SOL_PACKET, PACKET_LOSS, &one, sizeof(one))))
		return fail(s, rc, err, len, "PACKET_LOSS", ifname, NULL);
	/* Our own transmissions would otherwise come back on our rx ring. */
	if ((rc = sopt(s->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one))))
		return fail(s, rc, err, len, "PACKET_IGNORE_OUTGOING", ifname,
			    "the kernel needs Linux >= 4.20");
	if (g->qdisc_bypass &&
	    (rc = sopt(s->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one))))
		return fail(s, rc, err, len, "PACKET_QDISC_BYPASS", ifname, "give qdisc_bypass=0");
	if (setsockopt(s->fd, SOL_SOCKET, SO_SNDBUFFORCE, &g->sndbuf, sizeof(g->sndbuf)) != 0)
		(void)setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &g->sndbuf, sizeof(g->sndbuf));

	rx.tp_block_size = g->rx_block_size;
	rx.tp_block_nr = g->rx_blocks;
	/* V3 packs frames in a block and tp_frame_size only sizes the frame count; V2 slots are
	 * tp_frame_size each. V2 takes the struct tpacket_req prefix of tpacket_req3. */
	rx.tp_frame_size = g->version == TPACKET_V3 ? 2048 : g->rx_frame_size;
	rx.tp_frame_nr = (unsigned)(rx_len / rx.tp_frame_size);
	if (g->version == TPACKET_V3)
		rx.tp_retire_blk_tov = g->block_ms;
	if ((rc = sopt(s->fd, SOL_PACKET, PACKET_RX_RING, &rx,
		       g->version == TPACKET_V3 ? sizeof(rx) : sizeof(struct tpacket_req))))
		return fail(s, rc, err, len, "PACKET_RX_RING", ifname,
			    rc == -ENOMEM ? "give fewer blocks= or a smaller block_kb=" : NULL);
	/* The tx ring of a V3 socket is frame-based: the block fields beyond size/count stay 0.
	 * No tx ring (tx_frames 0): frames are sent with sendmmsg(), which a socket with a tx
	 * ring would not do (its sends only kick the ring). */
	tx.tp_block_size = g->tx_frame_size * 16;
	tx.tp_block_nr = g->tx_frames / 16;
	tx.tp_frame_size = g->tx_frame_size;
	tx.tp_frame_nr = g->tx_frames;
	if (g->tx_frames && (rc = sopt(s->fd, SOL_PACKET, PACKET_TX_RING, &tx,
		       g->version == TPACKET_V3 ? sizeof(tx) : sizeof(struct tpacket_req))))
		return fail(s, rc, err, len, "PACKET_TX_RING", ifname,
			    rc == -ENOMEM ? "give a smaller tx=" : NULL);
	s->map_len = rx_len + tx_len;
	s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, s->fd, 0);
	if (s->map == MAP_FAILED) /* MAP_LOCKED needs memlock room: try without */
		s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->map == MAP_FAILED) {
		rc = -errno;
		s->map = NULL;
		return fail(s, rc, err, len, "mmap of the rings", ifname, NULL);
	}
	s->rx = s->map;
	s->tx = g->tx_frames ? s->map + rx_len : NULL;

	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = ifindex};
	if (bind(s->fd, (struct sockaddr *)&sll, sizeof(sll)) != 0)
		return fail(s, -errno, err, len, "bind", ifname,
			    "check the interface with `ip link show`");
	if (g->fanout) {
		/* A new group gets an id no other group in the namespace has (UNIQUEID), so two
		 * processes never share one by chance; the other queues join it by that id.
		 * The per-socket PACKET_IGNORE_OUTGOING above has no effect on a socket in a
		 * fanout group (the group's hook delivers), so the group is made to ignore the
		 * frames the host sends on the port: every member asks, as flags must match. */
		unsigned flags = (g->fanout == 1 ? PACKET_FANOUT_FLAG_UNIQUEID : 0) |
				 PACKET_FANOUT_FLAG_IGNORE_OUTGOING;
		unsigned id = g->fanout == 1 ? 0 : (unsigned)g->fanout_id;
		int arg = (int)(id | ((g->fanout_mode | flags) << 16));
		socklen_t l = sizeof(arg);
		if ((rc = sopt(s->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg))))
			return fail(s, rc, err, len, "PACKET_FANOUT", ifname, NULL);
		if (g->fanout == 1) {
			if (getsockopt(s->fd, SOL_PACKET, PACKET_FANOUT, &arg, &l) != 0)
				return fail(s, -errno, err, len, "PACKET_FANOUT id", ifname, NULL);
			g->fanout_id = arg & 0xffff;
		}
	}
	if (g->promisc) {
		struct packet_mreq mr = {.mr_ifindex = ifindex, .mr_type = PACKET_MR_PROMISC};
		/* Reference-counted by the kernel and dropped with the socket. */
		if ((rc = sopt(s->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr))))
			return fail(s, rc, err, len, "promiscuous mode", ifname, "give promisc=0");
	}
	return 0;
}

void rf_afp_sock_close(struct rf_afp_sock *s)
{
	if (s->map)
		munmap(s->map, s->map_len);
	if (s->fd >= 0)
		close(s->fd);
	s->map = NULL;
	s->fd = -1;
}
