/*
 * apps/openflow/controller/ofc_topology.c: topology discovery by LLDP (see ofc_app.h).
 *
 * When a switch comes up, and every OFC_TIMER_MS after, one PACKET_OUT per port carries an
 * LLDP frame naming (dpid, port) (of_lldp_build: chassis "dpid:%016x", port id = port
 * number). A switch that receives it on a port sends it back as a PACKET_IN: that is the
 * link (src dpid, src port) -> (receiving dpid, in_port), one direction; the other direction
 * comes from the other switch's LLDP. Links live in net->links with their last-seen time;
 * PORT_STATUS (port deleted, link or admin down) and a closed switch remove them at once,
 * and a link not seen for OFC_LINK_AGE_MS (a cable pulled without a port event) ages out.
 *
 * LLDP is not taken on trust (a host can send any frame): each one we send carries an
 * organizationally specific TLV with a tag, SipHash-2-4 under a key drawn at start (never
 * sent) over (dpid, port, epoch), the epoch being the time in OFC_LLDP_EPOCH_MS units. A
 * received LLDP makes a link only when its tag is right for the current or the previous
 * epoch (a captured frame replays for at most two epochs) and its sending switch is
 * connected; anything else is counted (lldp_rejected) and dropped. The link ends are kept in
 * a table of their own (net->ends), so "is this port a link end" is one lookup, never a walk.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "ofc_app.h"

#define AGE_BATCH 256 /* links removed per pass; the rest go on the next timer */
#define TAG_OUI0 0x00 /* our TLV: type 127, OUI 00:26:e1 (ONF's, as ONOS does), subtype 0xa5 */
#define TAG_OUI1 0x26
#define TAG_OUI2 0xe1
#define TAG_SUBTYPE 0xa5
#define TAG_TLV_LEN 16 /* OUI(3) subtype(1) epoch(4) tag(8) */

/* ---- SipHash-2-4 (Aumasson & Bernstein), 64-bit tag of a short message ------------------- */

static uint64_t rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

#define SIPROUND                                                                           \
	do {                                                                               \
		v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);                  \
		v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;                                     \
		v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;                                     \
		v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);                  \
	} while (0)

static uint64_t le64(const uint8_t *p)
{
	uint64_t x = 0;
	for (int i = 7; i >= 0; i--)
		x = x << 8 | p[i];
	return x;
}

static uint64_t siphash24(const uint8_t key[16], const uint8_t *m, size_t len)
{
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = le64(m + i);
		v3 ^= w;
		SIPROUND;
		SIPROUND;
		v0 ^= w;
	}
	uint64_t b = (uint64_t)len << 56;
	for (size_t j = 0; i + j < len; j++)
		b |= (uint64_t)m[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static uint64_t lldp_tag(const struct ofc_net *net, uint64_t dpid, uint32_t port, uint32_t epoch)
{
	uint8_t m[16];
	ofc_put64(m, dpid);
	ofc_put32(m + 8, port);
	ofc_put32(m + 12, epoch);
	return siphash24(net->lldp_key, m, sizeof(m));
}

int ofc_lldp_key_init(struct ofc_net *net)
{
	size_t got = 0;
	while (got < sizeof(net->lldp_key)) {
		ssize_t n = getrandom(net->lldp_key + got, sizeof(net->lldp_key) - got, 0);
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
}

/* Our TLV inserted before the End TLV of an LLDP frame of len bytes (cap: its buffer).
 * Returns the new length or -1. */
static ssize_t add_tag(const struct ofc_net *net, uint8_t *f, size_t len, size_t cap,
		       uint64_t dpid, uint32_t port, uint64_t now_ms)
{
	size_t off = 14; /* untagged: of_lldp_build's frame */
	while (off + 2 <= len && of_get16(f + off) != 0)
		off += 2 + (of_get16(f + off) & 0x1ff);
	if (off + 2 > len || off + 2 + 2 + TAG_TLV_LEN + 2 > cap)
		return -1;
	uint32_t epoch = (uint32_t)(now_ms / OFC_LLDP_EPOCH_MS);
	uint8_t *t = f + off;
	t[0] = (uint8_t)(127 << 1); /* type 127, length 16 (< 256) */
	t[1] = TAG_TLV_LEN;
	t[2] = TAG_OUI0, t[3] = TAG_OUI1, t[4] = TAG_OUI2, t[5] = TAG_SUBTYPE;
	ofc_put32(t + 6, epoch);
	ofc_put64(t + 10, lldp_tag(net, dpid, port, epoch));
	off += 2 + TAG_TLV_LEN;
	f[off] = f[off + 1] = 0; /* End */
	off += 2;
	if (off < 60) {
		memset(f + off, 0, 60 - off);
		off = 60;
	}
	return (ssize_t)off;
}

/* True when the LLDP payload p[0..n) carries a right tag for (dpid, port) in the current or
 * the previous epoch. */
static bool tag_ok(const struct ofc_net *net, const uint8_t *p, size_t n, uint64_t dpid,
		   uint32_t port, uint64_t now_ms)
{
	size_t off = 0;
	while (off + 2 <= n) {
		unsigned h = of_get16(p + off), type = h >> 9, tl = h & 0x1ff;
		const uint8_t *v = p + off + 2;
		if (type == 0 || tl > n - off - 2)
			return false;
		off += 2 + tl;
		if (type != 127 || tl != TAG_TLV_LEN || v[0] != TAG_OUI0 || v[1] != TAG_OUI1 ||
		    v[2] != TAG_OUI2 || v[3] != TAG_SUBTYPE)
			continue;
		uint32_t epoch = of_get32(v + 4), cur = (uint32_t)(now_ms / OFC_LLDP_EPOCH_MS);
		if (epoch != cur && epoch + 1 != cur)
			return false; /* too old (a replay) or from the future */
		uint64_t want = lldp_tag(net, dpid, port, epoch), got = ofc_get64(v + 8);
		return ((want ^ got) == 0); /* the whole word compared at once */
	}
	return false;
}

static void link_key(uint8_t key[24], uint64_t sd, uint32_t sp, uint64_t dd, uint32_t dp)
{
	ofc_put64(key, sd);
	ofc_put32(key + 8, sp);
	ofc_put64(key + 12, dd);
	ofc_put32(key + 20, dp);
}

static void end_key(uint8_t key[12], uint64_t dpid, uint32_t port)
{
	ofc_put64(key, dpid);
	ofc_put32(key + 8, port);
}

/* Deletes the links for which match() holds (and their ends), AGE_BATCH at a time; with
 * one_pass, at most AGE_BATCH (the rest on the next call). */
static void remove_where(struct ofc_net *net, bool (*match)(const uint8_t *key, uint64_t v,
							     const void *arg),
			 const void *arg, bool one_pass)
{
	uint8_t keys[AGE_BATCH][24];
	unsigned n;
	do {
		n = 0;
		struct rf_hash_iter it;
		const void *key;
		void *v;
		rf_hash_iter_init(net->links, &it);
		while (n < AGE_BATCH && rf_hash_iter_next(net->links, &it, &key, &v))
			if (match(key, (uint64_t)(uintptr_t)v, arg))
				memcpy(keys[n++], key, 24);
		for (unsigned i = 0; i < n; i++) {
			rf_hash_delete(net->links, keys[i], NULL);
			rf_hash_delete(net->ends, keys[i], NULL);      /* src end */
			rf_hash_delete(net->ends, keys[i] + 12, NULL); /* dst end */
		}
	} while (n == AGE_BATCH && !one_pass);
}

struct end {
	uint64_t dpid;
	uint32_t port;
};

static bool at_end(const uint8_t *key, uint64_t v, const void *arg)
{
	(void)v;
	const struct end *e = arg;
	for (int side = 0; side < 2; side++) {
		const uint8_t *k = key + 12 * side;
		if (ofc_get64(k) == e->dpid && (e->port == OFPP_ANY || of_get32(k + 8) == e->port))
			return true;
	}
	return false;
}

void ofc_links_remove(struct ofc_net *net, uint64_t dpid, uint32_t port)
{
	struct end e = {dpid, port};
	remove_where(net, at_end, &e, false);
}

bool ofc_links_has_end(struct ofc_net *net, uint64_t dpid, uint32_t port, uint64_t now_ms)
{
	uint8_t key[12];
	end_key(key, dpid, port);
	uint64_t v = (uint64_t)(uintptr_t)rf_hash_lookup(net->ends, key);
	return v && now_ms <= v - 1 + OFC_LINK_AGE_MS;
}

/* Deletes up to AGE_BATCH link ends not refreshed for OFC_LINK_AGE_MS. */
static void age_ends(struct ofc_net *net, uint64_t now)
{
	uint8_t keys[AGE_BATCH][12];
	unsigned n = 0;
	struct rf_hash_iter it;
	const void *key;
	void *v;
	rf_hash_iter_init(net->ends, &it);
	while (n < AGE_BATCH && rf_hash_iter_next(net->ends, &it, &key, &v))
		if (now > (uint64_t)(uintptr_t)v - 1 + OFC_LINK_AGE_MS)
			memcpy(keys[n++], key, 12);
	for (unsigned i = 0; i < n; i++)
		rf_hash_delete(net->ends, keys[i], NULL);
}

static bool too_old(const uint8_t *key, uint64_t v, const void *arg)
{
	(void)key;
	uint64_t now = *(const uint64_t *)arg;
	return now > v - 1 + OFC_LINK_AGE_MS;
}

static void count(_Atomic uint64_t *c)
{
	/* single writer (the I/O poller), read by the REST thread */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* One LLDP PACKET_OUT per port of sw, appended to out (as many as fit). */
static void send_lldp(struct ofc_net *net, const struct ofc_switch *sw, uint64_t now,
		      struct of_out *out)
{
	for (unsigned i = 0; i < sw->n_ports; i++) {
		if (sw->ports[i] >= OFPP_MAX)
			continue; /* LOCAL: no LLDP */
		uint8_t frame[128];
		ssize_t fl = of_lldp_build(frame, sizeof(frame), sw->hw[i], sw->dpid, sw->ports[i],
					   120);
		if (fl > 0)
			fl = add_tag(net, frame, (size_t)fl, sizeof(frame), sw->dpid, sw->ports[i], now);
		if (fl < 0)
			continue;
		ssize_t n = of_build_packet_out(out->p + out->len, out->cap - out->len, sw->version,
						0, OFP_NO_BUFFER, OFPP_CONTROLLER, sw->ports[i],
						frame, (size_t)fl);
		if (n < 0)
			return; /* out is full: the next period sends them */
		out->len += (size_t)n;
		count(&net->lldp_out);
	}
}

static void topo_switch_up(const struct ofc_app *a, const struct ofc_switch *sw, uint64_t now,
			   struct of_out *out)
{
	send_lldp(a->arg, sw, now, out);
}

static void topo_timer(const struct ofc_app *a, const struct ofc_switch *sw, uint64_t now,
		       struct of_out *out)
{
	if (sw) {
		send_lldp(a->arg, sw, now, out);
	} else {
		remove_where(a->arg, too_old, &now, true);
		age_ends(a->arg, now);
	}
}

static void topo_port_status(const struct ofc_app *a, const struct ofc_switch *sw,
			     const struct of_port_status *ps, uint64_t now)
{
	(void)now;
	if (ps->reason == 1 /* OFPPR_DELETE */ || (ps->port.state & 1u) /* LINK_DOWN */ ||
	    (ps->port.config & 1u) /* PORT_DOWN */)
		ofc_links_remove(a->arg, sw->dpid, ps->port.port_no);
}

static void topo_switch_down(const struct ofc_app *a, uint64_t dpid)
{
	ofc_links_remove(a->arg, dpid, OFPP_ANY);
}

static void topo_packet_in(const struct ofc_app *a, struct ofc_pkt *pk)
{
	struct ofc_net *net = a->arg;
	const struct of_packet_in *pi = &pk->m->u.packet_in;
	uint64_t src;
	uint32_t sport;
	if (pk->eth->type != OF_ETH_TYPE_LLDP || !(pi->match.fields & OF_MATCH_IN_PORT))
		return;
	uint8_t sw_key[8];
	if (of_lldp_parse(pi->data, pi->data_len, &src, &sport) != 0 ||
	    !tag_ok(net, pk->eth->payload, pk->eth->payload_len, src, sport, pk->now_ms) ||
	    (ofc_put64(sw_key, src), !rf_hash_lookup(net->switches, sw_key))) {
		/* forged, replayed, another controller's, or from a switch not connected:
		 * several handlers count, so a real read-modify-write (relaxed: only a count) */
		atomic_fetch_add_explicit(&net->lldp_rejected, 1, memory_order_relaxed);
		return;
	}
	/* several handlers write: a real read-modify-write; only a count, so relaxed */
	atomic_fetch_add_explicit(&net->lldp_in, 1, memory_order_relaxed);
	uint8_t key[24];
	link_key(key, src, sport, pk->dpid, pi->match.in_port);
	void *seen = (void *)(uintptr_t)(pk->now_ms + 1);
	rf_hash_upsert(net->ends, key, seen, NULL);      /* src end */
	rf_hash_upsert(net->ends, key + 12, seen, NULL); /* dst end */
	if (rf_hash_upsert(net->links, key, seen, NULL) == 0) {
		uint64_t last = atomic_load_explicit(&net->last_link_ms, memory_order_relaxed);
		while (last < pk->now_ms &&
		       !atomic_compare_exchange_weak_explicit(&net->last_link_ms, &last, pk->now_ms,
							      memory_order_relaxed,
							      memory_order_relaxed))
			;
	}
}

struct ofc_app ofc_topology_app(struct ofc_net *net)
{
	return (struct ofc_app){.name = "topology", .arg = net, .on_packet_in = topo_packet_in,
				.on_switch_up = topo_switch_up, .on_port_status = topo_port_status,
				.on_switch_down = topo_switch_down, .on_timer = topo_timer};
}
