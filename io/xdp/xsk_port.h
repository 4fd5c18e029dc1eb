/*
 * io/xdp/xsk_port.h: the AF_XDP mechanics under ringflow's xdp driver (io/xdp.c), with
 * frames named by their UMEM offset, so it can be tested without the pktbuf layer.
 *
 * An rf_xsk_prog is ringflow's XDP program (redirect_port.bpf.c) attached to one
 * interface; an rf_xsk_port is one AF_XDP socket on one (interface, queue) with its four
 * rings over a UMEM the caller owns (one region; every port over the region shares it,
 * each with its own fill and completion rings). The UMEM runs in unaligned-chunk mode, so a
 * frame may start at any offset (ringflow's pktbufs sit at a fixed stride that is not a
 * power of two); the kernel writes a received frame XDP_PACKET_HEADROOM (256) bytes after
 * the address put in the fill ring.
 *
 * Errors: negative errno, plus one line in err (what failed, why, the fix).
 * Threading: a port is used by one poller thread; the program by whoever opens/closes.
 */
#ifndef RINGFLOW_IO_XDP_XSK_PORT_H
#define RINGFLOW_IO_XDP_XSK_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/if_xdp.h>

enum rf_xsk_mode { RF_XSK_MODE_AUTO = 0, RF_XSK_MODE_NATIVE, RF_XSK_MODE_SKB };

struct rf_xsk_prog {
	int ifindex;
	char ifname[16];
	uint32_t xdp_flags;  /* XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE, as attached */
	int xsks_map_fd;
	int prog_fd;
	int link_fd;         /* the BPF link that holds the attachment, -1 when none */
	struct bpf_object *obj;
};

struct rf_xsk_ring_sizes {
	unsigned fill, comp, rx, tx; /* powers of two */
};

struct rf_xsk_port;

/* flags of rf_xsk_prog_attach: redirect every frame (frame mode), not just ip:port. */
#define RF_XSK_PROG_ALL_FRAMES 0x1u

/* Whether this process holds what loading and attaching an XDP program takes: CAP_NET_ADMIN,
 * and CAP_BPF or CAP_SYS_ADMIN (effective set). */
bool rf_xsk_may_load_bpf(void);

/* Load and attach ringflow's XDP program on ifname in mode (AUTO: native, else skb),
 * redirecting UDP to ip:port and ARP for ip (network order), or every frame with
 * RF_XSK_PROG_ALL_FRAMES in flags. Refuses an interface that already has an XDP program.
 * The mode attached is in prog->xdp_flags. */
int rf_xsk_prog_attach(struct rf_xsk_prog *prog, const char *ifname, enum rf_xsk_mode mode,
		       uint32_t ip, uint16_t port, unsigned flags, char *err, size_t len);
/* Detach and unload; safe on a prog that failed to attach (no-op). */
void rf_xsk_prog_detach(struct rf_xsk_prog *prog);
/* The id of the XDP program attached to ifindex in any mode, 0 if none (or on error). */
uint32_t rf_xsk_attached_id(int ifindex);
/* The number of rx queues of ifname (from sysfs), or -errno. */
int rf_xsk_queue_count(const char *ifname);

/* Open a socket on (prog's interface, queue) over umem [base, base+len) (page aligned),
 * frames at most frame_size bytes (>= 2048). All ports over one region, on any interface,
 * share one UMEM (registered by the first). Tries zero-copy first, then copy. Thread-safe. */
int rf_xsk_port_open(struct rf_xsk_port **out, struct rf_xsk_prog *prog, unsigned queue,
		     void *base, size_t len, unsigned frame_size, const struct rf_xsk_ring_sizes *sz,
		     char *err, size_t errlen);
/* Close the socket, and the UMEM when it was the last port over it (any order). */
void rf_xsk_port_close(struct rf_xsk_port *p);
/* The kernel's counters of the socket (XDP_STATISTICS: drops, full and empty rings, invalid
 * descriptors) into st; false when the kernel would not say. Any thread. */
bool rf_xsk_port_stats(const struct rf_xsk_port *p, struct xdp_statistics *st);
bool rf_xsk_port_zerocopy(const struct rf_xsk_port *p);
int rf_xsk_port_fd(const struct rf_xsk_port *p);
/* Free slots in the fill ring, and put n UMEM offsets there (all or none: returns n or 0). */
unsigned rf_xsk_fill_free(struct rf_xsk_port *p, unsigned want);
unsigned rf_xsk_fill(struct rf_xsk_port *p, const uint64_t *addrs, unsigned n);
/* Take up to n received descriptors (addr: UMEM offset of the frame's first byte). */
unsigned rf_xsk_rx(struct rf_xsk_port *p, struct xdp_desc *descs, unsigned n);
/* Free slots in the tx ring (at least want when that many are free). */
unsigned rf_xsk_tx_free(struct rf_xsk_port *p, unsigned want);
/* Queue up to n frames for transmission; kicks the kernel only when it asks (need_wakeup). */
unsigned rf_xsk_tx(struct rf_xsk_port *p, const struct xdp_desc *descs, unsigned n);
/* Take up to n UMEM offsets of transmitted frames back from the completion ring. */
unsigned rf_xsk_complete(struct rf_xsk_port *p, uint64_t *addrs, unsigned n);
/* Kick rx when the kernel asks for it (need_wakeup on the fill ring, skb/copy modes);
 * true when it did. */
bool rf_xsk_rx_wakeup(struct rf_xsk_port *p);
/* Busy polling (kernel 5.11+): SO_PREFER_BUSY_POLL, SO_BUSY_POLL = usecs and
 * SO_BUSY_POLL_BUDGET = budget on the socket, so that rf_xsk_rx_busy_poll runs the receive
 * NAPI in this thread. 0, or -errno with one line in err. */
int rf_xsk_port_busy_poll(struct rf_xsk_port *p, unsigned usecs, unsigned budget, char *err,
			  size_t errlen);
/* With busy polling on: one recvfrom(MSG_DONTWAIT), which polls the queue's NAPI once (up to
 * the budget) on this CPU; true when it made the call. */
bool rf_xsk_rx_busy_poll(struct rf_xsk_port *p);
/* sendto() kicks rf_xsk_tx made so far (any thread). */
uint64_t rf_xsk_port_tx_kicks(const struct rf_xsk_port *p);

#endif /* RINGFLOW_IO_XDP_XSK_PORT_H */
