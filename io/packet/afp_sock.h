/*
 * io/packet/afp_sock.h: one AF_PACKET socket with its two mmap'd rings (the packet driver's
 * queue), set up and torn down here so that io/packet.c only walks the rings.
 *
 * The one idea: the socket is made with protocol 0 (it receives nothing yet), its rings are
 * sized and mapped, and only then is it bound to the interface by ifindex with ETH_P_ALL and
 * joined to the device's fanout group, so no frame can arrive before the rings exist.
 * Layout of the one mapping: the rx ring (rx_blocks blocks of rx_block_size bytes; with
 * TPACKET_V3 the kernel hands over whole blocks, with TPACKET_V2 each block is cut into
 * rx_frame_size slots handed over one frame at a time), then the tx ring (tx_frames slots of
 * tx_frame_size bytes, one frame each, in the socket's version's frame format), if any:
 * tx_frames 0 makes none (the driver's send=mmsg).
 */
#ifndef RINGFLOW_IO_PACKET_AFP_SOCK_H
#define RINGFLOW_IO_PACKET_AFP_SOCK_H

#include <stddef.h>
#include <stdint.h>

struct rf_afp_geom {
	int version;                       /* TPACKET_V3 (blocks) or TPACKET_V2 (one frame a slot) */
	unsigned rx_blocks, rx_block_size; /* block_size: a multiple of the page size */
	unsigned block_ms;                 /* V3: a block is handed over at the latest after this */
	unsigned rx_frame_size;            /* V2: bytes per rx slot (a power of two) */
	unsigned tx_frames, tx_frame_size; /* frame_size: power of two, >= 2048; frames 0: no
					    * tx ring */
	unsigned fanout_mode;              /* PACKET_FANOUT_*, when fanout is not 0 */
	int fanout;                        /* 0: none (one queue); 1: make a new group (the
					    * kernel picks a free id, kept in fanout_id); 2: join
					    * group fanout_id */
	int fanout_id;
	int qdisc_bypass, promisc;
	int sndbuf;                        /* bytes (SO_SNDBUFFORCE, else SO_SNDBUF) */
};

struct rf_afp_sock {
	int fd;
	uint8_t *map;   /* rx ring, then tx ring */
	size_t map_len;
	uint8_t *rx, *tx; /* tx: NULL without a tx ring */
};

/* Open, size, map, bind to ifindex and make or join the fanout group (g->fanout_id is
 * written when a group is made). 0, or -errno with one line in
 * err ("packet: ...") and nothing left open. */
int rf_afp_sock_open(struct rf_afp_sock *s, int ifindex, const char *ifname,
		     struct rf_afp_geom *g, char *err, size_t len);

/* Unmap and close (a zeroed or failed socket is fine). */
void rf_afp_sock_close(struct rf_afp_sock *s);

#endif
