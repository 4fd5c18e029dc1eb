/*
 * tests/xdp/test_offload.c: the XDP fast path (ringflow/offload.h) on a veth bed: what the
 * kernel forwards is byte-exact and counted exactly, what it cannot or may not handle reaches
 * the app unmodified, and every refusal is a clear error.
 *
 * The bed lives in a network namespace of the test's own (unshare(CLONE_NEWNET); Criterion
 * runs each test in its own process), so it goes away with the process however it ends;
 * names carry the PID anyway. IPv6 is off, no interface has an address:
 *
 *   injector a0 ==veth== a1 [port A] --entry: output B--> [port B] b1 ==veth== b0 capture
 *
 * Frames carry a trailer (magic, sequence number) in their last 8 bytes. The test checks
 * contents and counts only; every wait is bounded and no timing decides an outcome.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <ringflow/io.h>
#include <ringflow/offload.h>
#include <ringflow/pktbuf.h>

#include "veth_bed.h"

#define NBUF 4096
#define MAGIC 0x4c464f52u /* "ROFL" */

static struct veth_bed bed = VETH_BED_INIT;
static struct rf_pktbuf_pool *pool;
static struct rf_io_dev *A, *B;

/* The bed and ports A (a1) and B (b1) in `mode` (skb|native), frame mode. */
static void bed_up(const char *mode)
{
	char spec[128], err[512];
	bed_netns("a network namespace, veth pairs, XDP programs");
	veth_bed_up(&bed, 'O', 0, 0);
	/* A frame redirected in native mode into b1 reaches b0 only through b0's NAPI (GRO). */
	bed_sh("ethtool -K %s gro on >/dev/null 2>&1; ethtool -K %s gro on >/dev/null 2>&1",
	       bed.b0, bed.a0);
	pool = rf_pktbuf_pool_create("offload", NBUF, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	snprintf(spec, sizeof(spec), "xdp:dev=%s,mode=%s,frames=1", bed.a1, mode);
	A = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(A, "open %s: %s", spec, err);
	snprintf(spec, sizeof(spec), "xdp:dev=%s,mode=%s,frames=1", bed.b1, mode);
	B = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(B, "open %s: %s", spec, err);
	cr_assert_eq(rf_offload_supported(A, err, sizeof(err)), 0);
}

static void bed_down(void)
{
	rf_io_close(A);
	rf_io_close(B);
	A = B = NULL;
	cr_assert_eq(rf_pktbuf_pool_avail(pool), NBUF, "every buffer back in the pool");
	rf_pktbuf_pool_free(pool);
	veth_bed_down(&bed);
}

/* ---- frames ---------------------------------------------------------------------------- */

static const uint8_t MAC_A0[6] = {0x02, 0, 0, 0, 0, 0x0a}, MAC_X[6] = {0x02, 0, 0, 0, 0, 0x0b};
static const uint8_t NEW_SRC[6] = {0x02, 0xaa, 0, 0, 0, 1}, NEW_DST[6] = {0x02, 0xbb, 0, 0, 0, 2};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Sets the header checksum of the 20-byte IPv4 header at ip over its other fields. */
static void ip_csum_set(uint8_t *ip)
{
	uint32_t sum = 0;
	put16(ip + 10, 0);
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, (uint16_t)~sum);
}

enum kind { K_PLAIN, K_UDP4, K_UDP6, K_VLAN, K_STAG };

/* A frame of len bytes of kind to MAC_X from MAC_A0, ending in the trailer (MAGIC, seq);
 * UDP source port 10000 + flow; ttl as given (IPv4 TTL, IPv6 hop limit). */
static size_t make_frame(uint8_t *f, size_t len, enum kind k, uint32_t seq, uint16_t flow,
			 uint8_t ttl)
{
	uint8_t *l3 = f + 14;
	memcpy(f, MAC_X, 6);
	memcpy(f + 6, MAC_A0, 6);
	for (size_t i = 14; i < len; i++)
		f[i] = (uint8_t)(seq * 13 + i * 7);
	switch (k) {
	case K_PLAIN:
		put16(f + 12, 0x88b5);
		break;
	case K_VLAN:
		put16(f + 12, 0x8100);
		put16(f + 14, 100);
		put16(f + 16, 0x88b5);
		break;
	case K_STAG: /* 802.1ad (QinQ's outer tag), VID 100 */
		put16(f + 12, 0x88a8);
		put16(f + 14, 100);
		put16(f + 16, 0x88b5);
		break;
	case K_UDP4:
		put16(f + 12, 0x0800);
		memset(l3, 0, 28);
		l3[0] = 0x45;
		put16(l3 + 2, (uint16_t)(len - 14));
		l3[8] = ttl;
		l3[9] = 17;
		l3[12] = 10, l3[15] = 1, l3[16] = 10, l3[19] = 2;
		ip_csum_set(l3);
		put16(l3 + 20, (uint16_t)(10000 + flow));
		put16(l3 + 22, 9000);
		put16(l3 + 24, (uint16_t)(len - 34));
		break;
	case K_UDP6:
		put16(f + 12, 0x86dd);
		memset(l3, 0, 48);
		l3[0] = 0x60;
		put16(l3 + 4, (uint16_t)(len - 54));
		l3[6] = 17;
		l3[7] = ttl;
		l3[8] = 0xfd, l3[23] = 1;
		l3[24] = 0xfd, l3[39] = 2;
		put16(l3 + 40, (uint16_t)(10000 + flow));
		put16(l3 + 42, 9000);
		put16(l3 + 44, (uint16_t)(len - 54));
		break;
	}
	uint32_t m = MAGIC;
	memcpy(f + len - 8, &m, 4);
	memcpy(f + len - 4, &seq, 4);
	return len;
}

/* The frame's seq from its trailer, which a pop that padded the frame to Ethernet's minimum
 * left up to 4 zero bytes before the end; -1 when there is none. */
static int64_t trailer(const uint8_t *f, size_t len)
{
	uint32_t m, seq;
	for (size_t pad = 0; pad <= 4 && len >= 8 + pad; pad++) {
		if (pad && f[len - pad] != 0)
			break;
		memcpy(&m, f + len - pad - 8, 4);
		memcpy(&seq, f + len - pad - 4, 4);
		if (m == MAGIC)
			return (int64_t)seq;
	}
	return -1;
}

static void inject(const uint8_t *f, size_t len)
{
	cr_assert_eq(send(bed.sa, f, len, 0), (ssize_t)len, "inject: %s", strerror(errno));
}

/* One frame from the capture if one is there now (VLAN tag put back from auxdata), or -1. */
static ssize_t grab(uint8_t *buf, size_t cap)
{
	return bed_grab(bed.sb, buf, cap);
}

/* What A's app side (userspace) received: each buffer is checked against want[] by its
 * trailer (when want is given) and freed; with fwd, it is sent out of B instead. */
struct seen {
	unsigned user, sink;     /* frames A's userspace got; frames b0 captured */
	uint64_t user_bytes;
};

static void poll_user(struct seen *s, bool fwd, uint8_t (*want)[256], const size_t *want_len)
{
	struct rf_pktbuf *b[32];
	unsigned n = rf_io_rx_burst(A, 0, b, 32), k = 0;
	for (unsigned i = 0; i < n; i++) {
		int64_t seq = trailer(rf_pktbuf_data(b[i]), b[i]->data_len);
		cr_assert_geq(seq, 0, "userspace got a frame that is not the test's");
		if (want) {
			cr_assert_eq(b[i]->data_len, want_len[seq], "frame %lld length", (long long)seq);
			cr_assert_eq(memcmp(rf_pktbuf_data(b[i]), want[seq], want_len[seq]), 0,
				     "frame %lld reached userspace modified", (long long)seq);
		}
		s->user_bytes += b[i]->data_len;
	}
	s->user += n;
	if (fwd)
		for (int tries = 0; k < n && tries < 100; tries++)
			k += rf_io_tx_burst(B, 0, b + k, n - k);
	rf_pktbuf_free_bulk(b + k, n - k);
}

/* Capture until `total` frames have shown up on b0 in all (userspace + sink) or 3 s pass;
 * each captured frame must equal exp[seq] byte for byte and come once. */
static void settle(struct seen *s, unsigned total, bool fwd, uint8_t (*exp)[256],
		   const size_t *exp_len, uint8_t (*want)[256], const size_t *want_len,
		   unsigned char *got)
{
	uint8_t buf[2048];
	double end = bed_now_s() + 3;
	while (bed_now_s() < end && (fwd ? s->sink : s->user + s->sink) < total) {
		poll_user(s, fwd, want, want_len);
		ssize_t r;
		while ((r = grab(buf, sizeof(buf))) >= 0) {
			int64_t seq = trailer(buf, (size_t)r);
			if (seq < 0)
				continue;
			cr_assert_eq(got[seq], 0, "frame %lld captured twice", (long long)seq);
			got[seq] = 1;
			s->sink++;
			if (exp) {
				cr_assert_eq((size_t)r, exp_len[seq], "frame %lld: %zd bytes, want %zu",
					     (long long)seq, r, exp_len[seq]);
				cr_assert_eq(memcmp(buf, exp[seq], (size_t)r), 0,
					     "frame %lld differs from what the actions make",
					     (long long)seq);
			}
		}
		usleep(200);
	}
	/* A last look for strays (a frame must not arrive twice or unexpectedly late). */
	poll_user(s, fwd, want, want_len);
}

static struct rf_offload_match match_plain(void)
{
	struct rf_offload_match m = {.fields = RF_OFFLOAD_F_ETH_DST | RF_OFFLOAD_F_ETH_TYPE,
				     .eth_type = 0x88b5};
	memcpy(m.eth_dst, MAC_X, 6);
	return m;
}

#define N 200
static uint8_t in[N][256], ex[N][256];
static size_t in_len[N], ex_len[N];
static unsigned char got[N];

/* ---- tests ------------------------------------------------------------------------------- */

/* Matching frames are rewritten and forwarded by the kernel, byte-exact; the others reach
 * userspace unmodified and are forwarded there; offloaded + userspace = what the sink saw. */
static void forwards(const char *mode)
{
	bed_up(mode);
	struct rf_offload_match m = match_plain();
	struct rf_offload_action act[3] = {{.type = RF_OFFLOAD_SET_ETH_SRC},
					   {.type = RF_OFFLOAD_SET_ETH_DST},
					   {.type = RF_OFFLOAD_OUTPUT, .port = B}};
	memcpy(act[0].mac, NEW_SRC, 6);
	memcpy(act[1].mac, NEW_DST, 6);
	cr_assert_eq(rf_offload_add(A, &m, act, 3), 0);
	uint64_t off_bytes = 0;
	unsigned off = 0;
	for (uint32_t i = 0; i < N; i++) {
		bool match = i % 3 != 0;
		in_len[i] = make_frame(in[i], 60 + (i * 7) % 190, match ? K_PLAIN : K_UDP4, i, 1, 64);
		memcpy(ex[i], in[i], in_len[i]);
		ex_len[i] = in_len[i];
		if (match) {
			memcpy(ex[i], NEW_DST, 6);
			memcpy(ex[i] + 6, NEW_SRC, 6);
			off++;
			off_bytes += in_len[i];
		}
		inject(in[i], in_len[i]);
	}
	struct seen s = {0};
	settle(&s, N, true, ex, ex_len, in, in_len, got);
	uint64_t hits, bytes;
	cr_assert_eq(rf_offload_stats(A, &m, &hits, &bytes), 0);
	cr_assert_eq(hits, off, "entry hits %llu, offloaded frames %u", (unsigned long long)hits, off);
	cr_assert_eq(bytes, off_bytes);
	cr_assert_eq(s.user, N - off, "userspace got %u, want %u", s.user, N - off);
	cr_assert_eq(hits + s.user, s.sink, "offloaded %llu + userspace %u != sink %u",
		     (unsigned long long)hits, s.user, s.sink);
	struct rf_offload_totals t;
	cr_assert_eq(rf_offload_totals(A, &t), 0);
	cr_assert_eq(t.entries, 1);
	cr_assert_eq(t.hits, hits);
	cr_assert_eq(t.bytes, bytes);
	bed_down();
}

Test(offload, forwards_byte_exact_skb) { forwards("skb"); }
Test(offload, forwards_byte_exact_native) { forwards("native"); }

/* Each action as the program runs it: VLAN push/pop (a pop that takes a frame below
 * Ethernet's 60-byte minimum pads it back, as the switch's pop does), TTL with the checksum
 * fixed (IPv4) and hop limit (IPv6), drop; an expiring TTL goes to userspace unmodified. Both
 * XDP modes. */
static void actions(const char *mode)
{
	bed_up(mode);
	struct rf_offload_match m4 = {.fields = RF_OFFLOAD_F_ETH_TYPE | RF_OFFLOAD_F_IP4_DST |
					       RF_OFFLOAD_F_IP_PROTO | RF_OFFLOAD_F_L4_SRC,
				      .eth_type = 0x0800, .ip4_dst = {10, 0, 0, 2}, .ip_proto = 17,
				      .l4_src = 10001};
	struct rf_offload_match m6 = {.fields = RF_OFFLOAD_F_IP6_DST | RF_OFFLOAD_F_L4_DST,
				      .l4_dst = 9000};
	m6.ip6_dst[0] = 0xfd, m6.ip6_dst[15] = 2;
	struct rf_offload_match mv = {.fields = RF_OFFLOAD_F_VLAN | RF_OFFLOAD_F_ETH_TYPE,
				      .vlan = 100, .eth_type = 0x88b5};
	struct rf_offload_match mdrop = m4;
	mdrop.l4_src = 10002;
	struct rf_offload_action a4[3] = {{.type = RF_OFFLOAD_DEC_TTL},
					  {.type = RF_OFFLOAD_PUSH_VLAN, .vlan = 7, .pcp = 5},
					  {.type = RF_OFFLOAD_OUTPUT, .port = B}};
	struct rf_offload_action a6[2] = {{.type = RF_OFFLOAD_DEC_TTL},
					  {.type = RF_OFFLOAD_OUTPUT, .port = B}};
	struct rf_offload_action av[2] = {{.type = RF_OFFLOAD_POP_VLAN},
					  {.type = RF_OFFLOAD_OUTPUT, .port = B}};
	struct rf_offload_action ad[1] = {{.type = RF_OFFLOAD_DROP}};
	cr_assert_eq(rf_offload_add(A, &m4, a4, 3), 0);
	cr_assert_eq(rf_offload_add(A, &m6, a6, 2), 0);
	cr_assert_eq(rf_offload_add(A, &mv, av, 2), 0);
	cr_assert_eq(rf_offload_add(A, &mdrop, ad, 1), 0);
	unsigned want_sink = 0, want_user = 0, want_drop = 0;
	for (uint32_t i = 0; i < 40; i++) {
		size_t len = 80 + i;
		switch (i % 5) {
		case 0: /* IPv4 UDP flow 1: dec TTL, push VLAN 7 pcp 5 */
			in_len[i] = make_frame(in[i], len, K_UDP4, i, 1, 64);
			memcpy(ex[i], in[i], 12);
			put16(ex[i] + 12, 0x8100);
			put16(ex[i] + 14, 5 << 13 | 7);
			memcpy(ex[i] + 16, in[i] + 12, len - 12);
			ex[i][16 + 2 + 8] = 63;
			ip_csum_set(ex[i] + 18);
			ex_len[i] = len + 4;
			want_sink++;
			break;
		case 1: /* IPv6 UDP: hop limit - 1 */
			in_len[i] = make_frame(in[i], len, K_UDP6, i, 3, 9);
			memcpy(ex[i], in[i], len);
			ex[i][14 + 7] = 8;
			ex_len[i] = len;
			want_sink++;
			break;
		case 2: /* tagged VLAN 100: popped; 60 and 62 bytes tagged end up at Ethernet's
			 * minimum, 56 and 58 bytes of frame and zero padding (the switch's pop) */
			if (i == 2 || i == 7)
				len = 60 + (i == 7 ? 2 : 0);
			in_len[i] = make_frame(in[i], len, K_VLAN, i, 0, 0);
			memcpy(ex[i], in[i], 12);
			memcpy(ex[i] + 12, in[i] + 16, len - 16);
			ex_len[i] = len - 4;
			if (ex_len[i] < 60) {
				memset(ex[i] + ex_len[i], 0, 60 - ex_len[i]);
				ex_len[i] = 60;
			}
			want_sink++;
			break;
		case 3: /* IPv4 flow 2: dropped in the kernel */
			in_len[i] = make_frame(in[i], len, K_UDP4, i, 2, 64);
			want_drop++;
			break;
		case 4: /* IPv4 flow 1 with TTL 1: cannot finish, to userspace unmodified */
			in_len[i] = make_frame(in[i], len, K_UDP4, i, 1, 1);
			want_user++;
			break;
		}
		inject(in[i], in_len[i]);
	}
	struct seen s = {0};
	settle(&s, want_sink + want_user, false, ex, ex_len, in, in_len, got);
	cr_assert_eq(s.sink, want_sink, "sink %u, want %u", s.sink, want_sink);
	cr_assert_eq(s.user, want_user, "userspace %u, want %u", s.user, want_user);
	uint64_t h;
	cr_assert_eq(rf_offload_stats(A, &mdrop, &h, NULL), 0);
	cr_assert_eq(h, want_drop);
	cr_assert_eq(rf_offload_stats(A, &m4, &h, NULL), 0);
	cr_assert_eq(h, 8, "the TTL-1 frames are not hits");
	struct rf_offload_totals t;
	cr_assert_eq(rf_offload_totals(A, &t), 0);
	cr_assert_eq(t.fallback_ttl, want_user);
	cr_assert_eq(t.hits, want_sink + want_drop);
	bed_down();
}

Test(offload, actions_rewrite_exactly_skb) { actions("skb"); }
Test(offload, actions_rewrite_exactly_native) { actions("native"); }

/* Send n frames of kind k (seq from base) and settle: how many went where. */
static struct seen burst_of(enum kind k, uint32_t base, unsigned n)
{
	memset(got, 0, sizeof(got));
	for (uint32_t i = base; i < base + n; i++) {
		in_len[i] = make_frame(in[i], 100, k, i, 1, 64);
		inject(in[i], in_len[i]);
	}
	struct seen s = {0};
	settle(&s, n, false, NULL, NULL, in, in_len, got);
	return s;
}

/* The same with n frames the plain entry matches. */
static struct seen burst(uint32_t base, unsigned n)
{
	return burst_of(K_PLAIN, base, n);
}

/* Deleting an entry sends its frames back to userspace; replacing swaps the actions and
 * keeps the counters. */
Test(offload, delete_returns_frames_to_userspace)
{
	bed_up("skb");
	struct rf_offload_match m = match_plain();
	struct rf_offload_action out = {.type = RF_OFFLOAD_OUTPUT, .port = B},
				 drop = {.type = RF_OFFLOAD_DROP};
	cr_assert_eq(rf_offload_add(A, &m, &out, 1), 0);
	struct seen s = burst(0, 20);
	cr_assert_eq(s.sink, 20);
	cr_assert_eq(s.user, 0);
	cr_assert_eq(rf_offload_replace(A, &m, &drop, 1), 0);
	s = burst(20, 20);
	cr_assert_eq(s.sink + s.user, 0, "replaced by drop: nothing arrives");
	uint64_t h;
	cr_assert_eq(rf_offload_stats(A, &m, &h, NULL), 0);
	cr_assert_eq(h, 40, "replace keeps the counters");
	cr_assert_eq(rf_offload_del(A, &m), 0);
	s = burst(40, 20);
	cr_assert_eq(s.user, 20, "after delete every frame reaches userspace (%u)", s.user);
	cr_assert_eq(s.sink, 0);
	cr_assert_eq(rf_offload_stats(A, &m, &h, NULL), -ENOENT);
	cr_assert_eq(rf_offload_del(A, &m), -ENOENT);
	cr_assert_eq(rf_offload_replace(A, &m, &out, 1), -ENOENT);
	struct rf_offload_totals t;
	cr_assert_eq(rf_offload_totals(A, &t), 0);
	cr_assert_eq(t.entries, 0);
	bed_down();
}

/* One phase of microflows_follow_their_entry: 2 x 100 UDP frames of 100 microflows (source
 * ports 10000..10099, each sent twice: the second time the program's cache answers), expected
 * out of B with `mac` as the destination (NULL: to userspace, unmodified). */
static struct seen microflow_phase(const uint8_t *mac)
{
	memset(got, 0, sizeof(got));
	for (uint32_t i = 0; i < 2 * 100; i++) {
		in_len[i] = make_frame(in[i], 64 + i % 50, K_UDP4, i, (uint16_t)(i % 100), 64);
		memcpy(ex[i], in[i], in_len[i]);
		ex_len[i] = in_len[i];
		if (mac)
			memcpy(ex[i], mac, 6);
		inject(in[i], in_len[i]);
	}
	struct seen s = {0};
	settle(&s, 200, false, mac ? ex : NULL, ex_len, in, in_len, got);
	return s;
}

/* Many microflows (whole keys the program caches per CPU) under one entry: every frame is
 * counted once and rewritten as the entry says, and a replace or delete reaches every one of
 * them from the moment it returns, cached or not. */
Test(offload, microflows_follow_their_entry)
{
	bed_up("skb");
	struct rf_offload_match m = {.fields = RF_OFFLOAD_F_ETH_TYPE | RF_OFFLOAD_F_IP4_DST,
				     .eth_type = 0x0800, .ip4_dst = {10, 0, 0, 2}};
	struct rf_offload_action a[2] = {{.type = RF_OFFLOAD_SET_ETH_DST},
					 {.type = RF_OFFLOAD_OUTPUT, .port = B}};
	memcpy(a[0].mac, NEW_DST, 6);
	cr_assert_eq(rf_offload_add(A, &m, a, 2), 0);
	uint64_t h0, w0, h1, w1, h2, w2, h3, w3;
	cr_assert_eq(rf_offload_cache_counts(A, &h0, &w0), 0);
	struct seen s = microflow_phase(NEW_DST);
	cr_assert_eq(s.sink, 200, "sink %u of 200", s.sink);
	cr_assert_eq(s.user, 0);
	/* Every frame went through the lookup once: from the cache, or by a walk (each
	 * microflow's first frame, per CPU that saw it). */
	cr_assert_eq(rf_offload_cache_counts(A, &h1, &w1), 0);
	cr_assert_eq((h1 - h0) + (w1 - w0), 200, "cache hits %llu + walks %llu, want 200",
		     (unsigned long long)(h1 - h0), (unsigned long long)(w1 - w0));
	cr_assert_geq(w1 - w0, 100, "each microflow walked once at least");
	cr_assert_gt(h1 - h0, 0, "second frames answered from the cache");
	memcpy(a[0].mac, NEW_SRC, 6); /* another destination for the same microflows */
	cr_assert_eq(rf_offload_replace(A, &m, a, 2), 0);
	s = microflow_phase(NEW_SRC);
	cr_assert_eq(s.sink, 200, "after replace: sink %u of 200", s.sink);
	cr_assert_eq(s.user, 0);
	cr_assert_eq(rf_offload_cache_counts(A, &h2, &w2), 0);
	cr_assert_eq((h2 - h1) + (w2 - w1), 200);
	cr_assert_geq(w2 - w1, 100, "the replace invalidated every cached answer (%llu walks)",
		      (unsigned long long)(w2 - w1));
	uint64_t h, bytes, want_bytes = 0;
	for (uint32_t i = 0; i < 200; i++)
		want_bytes += 64 + i % 50;
	cr_assert_eq(rf_offload_stats(A, &m, &h, &bytes), 0);
	cr_assert_eq(h, 400, "hits %llu, want 400", (unsigned long long)h);
	cr_assert_eq(bytes, 2 * want_bytes);
	cr_assert_eq(rf_offload_del(A, &m), 0);
	s = microflow_phase(NULL);
	cr_assert_eq(s.user, 200, "after delete: userspace %u of 200", s.user);
	cr_assert_eq(s.sink, 0);
	cr_assert_eq(rf_offload_cache_counts(A, &h3, &w3), 0);
	cr_assert(h3 == h2 && w3 == w2, "an empty table is not looked up (%llu hits, %llu walks)",
		  (unsigned long long)(h3 - h2), (unsigned long long)(w3 - w2));
	bed_down();
}

/* Wait (bounded) until the kernel reports B's link as want (an `ip link set up` is seen as
 * running a moment later, by linkwatch), then tell the tables. */
static void link_settle(int want)
{
	double end = bed_now_s() + 5;
	while (rf_io_link_up(B) != want && bed_now_s() < end)
		usleep(1000);
	cr_assert_eq(rf_io_link_up(B), want, "link of %s never became %d", bed.b1, want);
	cr_assert_eq(rf_offload_link_sync(B), 0);
}

/* A port going down stops the entries that output to it (their frames reach userspace
 * unmodified, counted); back up, they resume. */
Test(offload, port_down_stops_its_entries)
{
	bed_up("skb");
	struct rf_offload_match m = match_plain();
	struct rf_offload_action act[2] = {{.type = RF_OFFLOAD_SET_ETH_SRC},
					   {.type = RF_OFFLOAD_OUTPUT, .port = B}};
	memcpy(act[0].mac, NEW_SRC, 6);
	cr_assert_eq(rf_offload_add(A, &m, act, 2), 0);
	cr_assert_eq(bed_sh("ip link set %s down", bed.b1), 0);
	link_settle(0);
	struct seen s = burst(0, 20);
	cr_assert_eq(s.user, 20, "port down: frames reach userspace (%u)", s.user);
	struct rf_offload_totals t;
	cr_assert_eq(rf_offload_totals(A, &t), 0);
	cr_assert_eq(t.fallback_port_down, 20);
	cr_assert_eq(t.hits, 0);
	cr_assert_eq(bed_sh("ip link set %s up", bed.b1), 0);
	link_settle(1);
	s = burst(20, 20);
	cr_assert_eq(s.user, 0);
	cr_assert_eq(s.sink, 20, "port up again: offloaded (%u)", s.sink);
	bed_down();
}

/* The port-wide entry (no field named: l2fwd --offload's port pair) takes every frame the
 * earlier masks do not, and the program's fast path for it (no parse, no key: while it is the
 * first mask in use) never hides a mask that comes first: one installed before it, or one
 * installed later into a slot a deletion freed before its own, wins from the moment its add
 * returns. Counters carry over a replace; a down output port sends its frames to userspace. */
Test(offload, port_wide_entry_yields_to_an_earlier_mask)
{
	bed_up("native");
	struct rf_offload_match all = {.fields = 0}, m = match_plain();
	struct rf_offload_action out = {.type = RF_OFFLOAD_OUTPUT, .port = B},
				 drop = {.type = RF_OFFLOAD_DROP};
	uint64_t h;
	cr_assert_eq(rf_offload_add(A, &m, &drop, 1), 0);  /* mask slot 0 */
	cr_assert_eq(rf_offload_add(A, &all, &out, 1), 0); /* mask slot 1 */
	struct seen s = burst_of(K_PLAIN, 0, 20);
	cr_assert_eq(s.sink + s.user, 0, "the earlier mask's drop wins (%u, %u)", s.sink, s.user);
	s = burst_of(K_UDP4, 20, 20);
	cr_assert_eq(s.sink, 20, "what it does not match goes port-wide (%u)", s.sink);
	cr_assert_eq(s.user, 0);
	cr_assert_eq(rf_offload_del(A, &m), 0); /* the port-wide mask is first now */
	s = burst_of(K_PLAIN, 40, 20);
	cr_assert_eq(s.sink, 20, "port-wide alone takes every frame (%u)", s.sink);
	cr_assert_eq(rf_offload_add(A, &m, &drop, 1), 0); /* back into slot 0, before it */
	s = burst_of(K_PLAIN, 60, 20);
	cr_assert_eq(s.sink + s.user, 0, "a mask added before the port-wide one wins at once "
		     "(%u forwarded, %u to userspace)", s.sink, s.user);
	cr_assert_eq(rf_offload_stats(A, &m, &h, NULL), 0);
	cr_assert_eq(h, 20);
	cr_assert_eq(rf_offload_stats(A, &all, &h, NULL), 0);
	cr_assert_eq(h, 40, "port-wide hits %llu", (unsigned long long)h);
	cr_assert_eq(rf_offload_del(A, &m), 0);
	cr_assert_eq(bed_sh("ip link set %s down", bed.b1), 0);
	link_settle(0);
	s = burst_of(K_PLAIN, 80, 20);
	cr_assert_eq(s.user, 20, "output port down: frames reach userspace unmodified (%u)", s.user);
	struct rf_offload_totals t;
	cr_assert_eq(rf_offload_totals(A, &t), 0);
	cr_assert_eq(t.fallback_port_down, 20);
	cr_assert_eq(bed_sh("ip link set %s up", bed.b1), 0);
	link_settle(1);
	cr_assert_eq(rf_offload_replace(A, &all, &drop, 1), 0);
	s = burst_of(K_UDP4, 100, 20);
	cr_assert_eq(s.sink + s.user, 0, "replaced by drop: nothing arrives (%u, %u)", s.sink,
		     s.user);
	cr_assert_eq(rf_offload_stats(A, &all, &h, NULL), 0);
	cr_assert_eq(h, 60, "replace keeps the counters (%llu)", (unsigned long long)h);
	cr_assert_eq(rf_offload_del(A, &all), 0);
	s = burst_of(K_UDP4, 120, 20);
	cr_assert_eq(s.user, 20, "after delete every frame reaches userspace (%u)", s.user);
	cr_assert_eq(s.sink, 0);
	bed_down();
}

/* Send one frame of kind k (seq), 100 bytes; with short, an IPv4 one whose total length
 * claims 20 bytes more than the frame holds. */
static void send_one(enum kind k, uint32_t seq, bool short_ip)
{
	in_len[seq] = make_frame(in[seq], 100, k, seq, 1, 64);
	if (short_ip) {
		uint8_t *ip = in[seq] + 14;
		put16(ip + 2, (uint16_t)(in_len[seq] - 14 + 20));
		ip_csum_set(ip);
	}
	inject(in[seq], in_len[seq]);
}

/* UNTAGGED and CTAG name the tag itself: an 802.1ad frame, which the kernel reads past its
 * tag like an 802.1Q one, matches neither an untagged entry nor an 802.1Q one (ringflow-switch's
 * parser knows 802.1Q only and sees EtherType 0x88a8). An IPv4 frame whose total length runs
 * past the frame matches no entry naming fields (a length-checking parser drops it), only a
 * port-wide one. Frames left to userspace arrive unmodified. */
Test(offload, tags_and_cut_ip_headers)
{
	bed_up("skb");
	struct rf_offload_match u = match_plain(), c = match_plain(),
				ip = {.fields = RF_OFFLOAD_F_ETH_TYPE | RF_OFFLOAD_F_UNTAGGED,
				      .eth_type = 0x0800}, /* no IP field: the length decides */
				all = {.fields = 0};
	u.fields |= RF_OFFLOAD_F_UNTAGGED;
	c.fields |= RF_OFFLOAD_F_VLAN | RF_OFFLOAD_F_CTAG;
	c.vlan = 100;
	struct rf_offload_action out = {.type = RF_OFFLOAD_OUTPUT, .port = B},
				 drop = {.type = RF_OFFLOAD_DROP};
	struct rf_offload_match both = u;
	both.fields |= RF_OFFLOAD_F_VLAN;
	cr_assert_eq(rf_offload_add(A, &both, &out, 1), -EINVAL, "UNTAGGED with VLAN");
	cr_assert_eq(rf_offload_add(A, &u, &out, 1), 0);
	cr_assert_eq(rf_offload_add(A, &c, &out, 1), 0);
	cr_assert_eq(rf_offload_add(A, &ip, &drop, 1), 0);
	memset(got, 0, sizeof(got));
	send_one(K_PLAIN, 0, false); /* u */
	send_one(K_VLAN, 1, false);  /* c */
	send_one(K_STAG, 2, false);  /* neither: userspace */
	send_one(K_UDP4, 3, false);  /* ip: dropped */
	send_one(K_UDP4, 4, true);   /* cut: userspace */
	struct seen s = {0};
	settle(&s, 4, false, NULL, NULL, in, in_len, got);
	cr_assert_eq(s.sink, 2, "the untagged and the 802.1Q frame forwarded (%u)", s.sink);
	cr_assert(got[0] && got[1], "frames 0 and 1 captured");
	cr_assert_eq(s.user, 2, "the 802.1ad frame and the cut IPv4 one reach userspace (%u)",
		     s.user);
	uint64_t h;
	cr_assert_eq(rf_offload_stats(A, &ip, &h, NULL), 0);
	cr_assert_eq(h, 1, "only the whole IPv4 frame was dropped by its entry");
	cr_assert_eq(rf_offload_add(A, &all, &out, 1), 0); /* port-wide, behind the others */
	memset(got, 0, sizeof(got));
	send_one(K_UDP4, 5, true);
	s = (struct seen){0};
	settle(&s, 1, false, NULL, NULL, in, in_len, got);
	cr_assert_eq(s.sink, 1, "the port-wide entry takes the cut frame (%u)", s.sink);
	cr_assert_eq(s.user, 0);
	cr_assert_eq(rf_offload_stats(A, &all, &h, NULL), 0);
	cr_assert_eq(h, 1);
	bed_down();
}

/* WHOLE: an entry naming it takes a frame only when every header a strict parser reads is
 * there (ringflow/offload.h), so an app whose parser drops the rest (ringflow-switch) never
 * has the kernel forward one. WHOLE alone runs on the port-wide fast path, which parses the
 * frame to tell; a frame it refuses goes on to the table, where a later port-wide entry of
 * every frame may still take it. */
Test(offload, whole_frames_only)
{
	bed_up("native");
	struct rf_offload_match whole = {.fields = RF_OFFLOAD_F_WHOLE}, all = {.fields = 0};
	struct rf_offload_action out = {.type = RF_OFFLOAD_OUTPUT, .port = B};
	cr_assert_eq(rf_offload_add(A, &whole, &out, 1), 0);
	enum { NW = 10 };
	static const bool want_whole[NW] = {1, 1, 1, 1, 0, 0, 0, 0, 1, 0};
	unsigned nwhole = 0;
	for (int i = 0; i < NW; i++)
		nwhole += want_whole[i];
	for (int round = 0; round < 2; round++) {
		memset(got, 0, sizeof(got));
		for (uint32_t i = 0; i < NW; i++) {
			uint32_t q = (uint32_t)round * NW + i;
			uint8_t *f = in[q], *ip = f + 14;
			static const enum kind k[NW] = {K_UDP4, K_UDP6, K_PLAIN, K_VLAN, K_UDP4,
							K_UDP4, K_UDP6, K_PLAIN, K_UDP4, K_UDP4};
			in_len[q] = make_frame(f, 100, k[i], q, 1, 64);
			switch (i) {
			case 4: /* total length 22: two bytes of UDP header */
			case 8: /* the same in a later fragment: no L4 header is read */
			case 9: /* the same in a first fragment (more fragments): it is read */
				put16(ip + 2, 22);
				put16(ip + 6, i == 8 ? 100 : i == 9 ? 0x2000 : 0);
				ip_csum_set(ip);
				break;
			case 5: /* IP version 5 in an IPv4 frame */
				ip[0] = 0x55;
				ip_csum_set(ip);
				break;
			case 6: /* a hop-by-hop extension header: never WHOLE */
				ip[6] = 0;
				break;
			case 7: /* Ethernet/IPv4 ARP of 20 bytes (28 needed) */
				in_len[q] = 34;
				put16(f + 12, 0x0806);
				put16(ip, 1), put16(ip + 2, 0x0800), ip[4] = 6, ip[5] = 4;
				put16(ip + 6, 1);
				memcpy(f + 26, &(uint32_t){MAGIC}, 4);
				memcpy(f + 30, &q, 4);
				break;
			}
			inject(f, in_len[q]);
		}
		struct seen s = {0};
		settle(&s, NW, false, NULL, NULL, in, in_len, got);
		for (uint32_t i = 0; i < NW; i++)
			cr_assert_eq(got[round * NW + i], round == 1 || want_whole[i],
				     "round %d frame %u: forwarded %d", round, i,
				     got[round * NW + i]);
		if (round == 0) {
			cr_assert_eq(s.sink, nwhole, "whole frames forwarded (%u)", s.sink);
			cr_assert_eq(s.user, NW - nwhole, "the rest reach userspace (%u)", s.user);
			uint64_t h;
			cr_assert_eq(rf_offload_stats(A, &whole, &h, NULL), 0);
			cr_assert_eq(h, nwhole);
			/* a port-wide entry of every frame, in the next mask slot: it takes
			 * what WHOLE refuses */
			cr_assert_eq(rf_offload_add(A, &all, &out, 1), 0);
		} else {
			cr_assert_eq(s.sink, NW, "everything forwarded (%u)", s.sink);
			cr_assert_eq(s.user, 0);
			uint64_t h;
			cr_assert_eq(rf_offload_stats(A, &all, &h, NULL), 0);
			cr_assert_eq(h, NW - nwhole, "the port-wide entry took the rest (%llu)",
				     (unsigned long long)h);
		}
	}
	bed_down();
}

/* Closing the output port stops the entries that send to it, as a port down does. */
Test(offload, closing_output_port_stops_entries)
{
	bed_up("skb");
	struct rf_offload_match m = match_plain();
	struct rf_offload_action out = {.type = RF_OFFLOAD_OUTPUT, .port = B};
	cr_assert_eq(rf_offload_add(A, &m, &out, 1), 0);
	struct seen s = burst(0, 10);
	cr_assert_eq(s.sink, 10);
	rf_io_close(B);
	B = NULL;
	s = burst(10, 20);
	cr_assert_eq(s.user, 20, "output port closed: frames reach userspace (%u)", s.user);
	cr_assert_eq(s.sink, 0);
	struct rf_offload_totals t;
	cr_assert_eq(rf_offload_totals(A, &t), 0);
	cr_assert_eq(t.fallback_port_down, 20);
	cr_assert_eq(t.hits, 10);
	bed_down();
}

/* A full table refuses with -ENOSPC (counted) and the refused flow stays in userspace;
 * bad entries are -EINVAL, duplicates -EEXIST. */
Test(offload, table_full_falls_back_counted)
{
	bed_up("skb");
	struct rf_offload_action out = {.type = RF_OFFLOAD_OUTPUT, .port = B};
	struct rf_offload_match m = {.fields = RF_OFFLOAD_F_ETH_SRC | RF_OFFLOAD_F_ETH_DST};
	memcpy(m.eth_dst, MAC_X, 6);
	for (unsigned i = 0; i < RF_OFFLOAD_MAX_ENTRIES; i++) {
		m.eth_src[0] = 0x06, m.eth_src[4] = (uint8_t)(i >> 8), m.eth_src[5] = (uint8_t)i;
		cr_assert_eq(rf_offload_add(A, &m, &out, 1), 0, "entry %u", i);
	}
	cr_assert_eq(rf_offload_add(A, &m, &out, 1), -EEXIST);
	struct rf_offload_match real = match_plain();
	cr_assert_eq(rf_offload_add(A, &real, &out, 1), -ENOSPC);
	struct seen s = burst(0, 20);
	cr_assert_eq(s.user, 20, "the refused flow stays in userspace (%u)", s.user);
	cr_assert_eq(s.sink, 0);
	struct rf_offload_totals t;
	cr_assert_eq(rf_offload_totals(A, &t), 0);
	cr_assert_eq(t.full, 1);
	cr_assert_eq(t.entries, RF_OFFLOAD_MAX_ENTRIES);
	cr_assert_eq(rf_offload_flush(A), RF_OFFLOAD_MAX_ENTRIES);
	/* Masks: eight field sets fit, the ninth does not. */
	static const uint32_t sets[RF_OFFLOAD_MAX_MASKS] = {
		RF_OFFLOAD_F_ETH_TYPE, RF_OFFLOAD_F_ETH_DST, RF_OFFLOAD_F_ETH_SRC,
		RF_OFFLOAD_F_VLAN,     RF_OFFLOAD_F_IP4_SRC, RF_OFFLOAD_F_IP4_DST,
		RF_OFFLOAD_F_IP6_SRC,  RF_OFFLOAD_F_IP_PROTO};
	for (unsigned i = 0; i < RF_OFFLOAD_MAX_MASKS; i++) {
		struct rf_offload_match mm = {.fields = sets[i]};
		cr_assert_eq(rf_offload_add(A, &mm, &out, 1), 0, "mask %u (%#x)", i, mm.fields);
	}
	struct rf_offload_match ninth = {.fields = RF_OFFLOAD_F_L4_DST | RF_OFFLOAD_F_L4_SRC};
	cr_assert_eq(rf_offload_add(A, &ninth, &out, 1), -ENOSPC);
	cr_assert_eq(rf_offload_totals(A, &t), 0);
	cr_assert_eq(t.full, 2);
	cr_assert_eq(rf_offload_flush(A), RF_OFFLOAD_MAX_MASKS);
	cr_assert_eq(rf_offload_add(A, &ninth, &out, 1), 0, "a freed mask slot is reused");
	/* Bad entries. */
	struct rf_offload_match bad = {.fields = RF_OFFLOAD_F_IP4_SRC | RF_OFFLOAD_F_IP6_DST};
	cr_assert_eq(rf_offload_add(A, &bad, &out, 1), -EINVAL);
	bad.fields = RF_OFFLOAD_F_ALL + 1; /* the next bit, not on the menu */
	cr_assert_eq(rf_offload_add(A, &bad, &out, 1), -EINVAL);
	struct rf_offload_action notlast[2] = {{.type = RF_OFFLOAD_OUTPUT, .port = B},
					       {.type = RF_OFFLOAD_DEC_TTL}};
	cr_assert_eq(rf_offload_add(A, &real, notlast, 2), -EINVAL);
	struct rf_offload_action noport = {.type = RF_OFFLOAD_OUTPUT, .port = NULL};
	cr_assert_eq(rf_offload_add(A, &real, &noport, 1), -EINVAL);
	cr_assert_eq(rf_offload_add(A, &real, &out, 0), -EINVAL);
	bed_down();
}

/* A port without a fast path says why in one line, and every call says -ENOTSUP. */
Test(offload, refusal_is_one_line)
{
	char err[512], why[512];
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create("ofl-udp", 64, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(p);
	struct rf_io_dev *u = rf_io_open("udp:listen=127.0.0.1:0", p, err, sizeof(err));
	cr_assert_not_null(u, "open udp: %s", err);
	cr_assert_eq(rf_offload_supported(u, why, sizeof(why)), -ENOTSUP);
	cr_assert_eq(strncmp(why, "offload: ", 9), 0, "%s", why);
	cr_assert_null(strchr(why, '\n'));
	cr_assert(strstr(why, "without offload"), "%s", why);
	struct rf_offload_match m = match_plain();
	struct rf_offload_action drop = {.type = RF_OFFLOAD_DROP};
	struct rf_offload_totals t;
	cr_assert_eq(rf_offload_add(u, &m, &drop, 1), -ENOTSUP);
	cr_assert_eq(rf_offload_del(u, &m), -ENOTSUP);
	cr_assert_eq(rf_offload_totals(u, &t), -ENOTSUP);
	cr_assert_eq(rf_offload_link_sync(u), -ENOTSUP);
	cr_assert_eq(rf_offload_supported(NULL, why, sizeof(why)), -ENOTSUP);
	rf_io_close(u);
	rf_pktbuf_pool_free(p);
}
