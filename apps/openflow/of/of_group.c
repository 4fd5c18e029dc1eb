/*
 * apps/openflow/of/of_group.c: GROUP_MOD and the group multiparts (of_group.h has the wire
 * layouts). Every length is checked against the bytes received before anything behind it is
 * read: a bucket that claims more than the message holds is an error, never a read past it.
 */
#include <errno.h>
#include <string.h>

#include "of_group.h"
#include "of_wire.h"

#define MP_REQUEST 18
#define MP_REPLY 19
#define GM_LEN 16
#define BUCKET_LEN 16

static int fault(struct of_fault *f, uint16_t type, uint16_t code, const char *why)
{
	of_fault_set(f, type, code, false, why);
	return -EBADMSG;
}

int of_group_mod_parse(const uint8_t *buf, size_t len, struct of_group_mod *m,
		       struct of_fault *f)
{
	if (len < OF_HEADER_LEN || buf[0] != OF_VERSION_1_3 || buf[1] != OF13_GROUP_MOD)
		return -ENOENT;
	if (len < GM_LEN || of_get16(buf + 2) != len)
		return fault(f, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, "GROUP_MOD shorter than 16 bytes");
	memset(m, 0, offsetof(struct of_group_mod, buckets));
	m->xid = of_get32(buf + 4);
	m->command = of_get16(buf + 8);
	m->type = buf[10];
	m->group_id = of_get32(buf + 12);
	for (size_t off = GM_LEN; off < len;) {
		if (len - off < BUCKET_LEN)
			return fault(f, OFPET_GROUP_MOD_FAILED, OFPGMFC_BAD_BUCKET,
				     "bucket header runs past the GROUP_MOD");
		size_t blen = of_get16(buf + off);
		if (blen < BUCKET_LEN || blen % 8 || blen > len - off)
			return fault(f, OFPET_GROUP_MOD_FAILED, OFPGMFC_BAD_BUCKET,
				     "bucket length is bad");
		if (m->nbuckets == OF_MAX_BUCKETS)
			return fault(f, OFPET_GROUP_MOD_FAILED, OFPGMFC_OUT_OF_BUCKETS,
				     "more buckets than this switch keeps");
		struct of_bucket *b = &m->buckets[m->nbuckets++];
		memset(b, 0, sizeof(*b));
		b->weight = of_get16(buf + off + 2);
		b->watch_port = of_get32(buf + off + 4);
		b->watch_group = of_get32(buf + off + 8);
		int rc = of_actions_parse(OF_VERSION_1_3, buf + off + BUCKET_LEN, blen - BUCKET_LEN,
					  &b->actions, f);
		if (rc)
			return rc;
		off += blen;
	}
	return 0;
}

/* The wire bytes of bucket b, or 0 when its actions have no 1.3 form. */
static size_t bucket_len(const struct of_bucket *b)
{
	if (!of_actions_fit(OF_VERSION_1_3, &b->actions))
		return 0;
	return BUCKET_LEN + of_actions_len(OF_VERSION_1_3, &b->actions);
}

static void bucket_put(struct of_wbuf *w, const struct of_bucket *b, size_t blen)
{
	of_put16(w, (uint16_t)blen);
	of_put16(w, b->weight);
	of_put32(w, b->watch_port);
	of_put32(w, b->watch_group);
	of_put_zeros(w, 4);
	of_actions_put(w, OF_VERSION_1_3, &b->actions);
}

/* Total bucket bytes of n buckets (0 with *ok false when one has no form or it is too long). */
static size_t buckets_len(const struct of_bucket *b, unsigned n, bool *ok)
{
	size_t total = 0;
	*ok = true;
	for (unsigned i = 0; i < n; i++) {
		size_t l = bucket_len(&b[i]);
		if (!l || l > 0xffff)
			*ok = false;
		total += l;
	}
	return total;
}

ssize_t of_group_mod_build(const struct of_group_mod *m, uint8_t *buf, size_t cap)
{
	bool ok;
	if (m->nbuckets > OF_MAX_BUCKETS)
		return -EINVAL;
	size_t total = GM_LEN + buckets_len(m->buckets, m->nbuckets, &ok);
	if (!ok || total > OF_MAX_MSG_LEN)
		return -EINVAL;
	if (cap < total)
		return -ENOBUFS;
	struct of_wbuf w = of_wbuf_init(buf, cap);
	of_put8(&w, OF_VERSION_1_3);
	of_put8(&w, OF13_GROUP_MOD);
	of_put16(&w, (uint16_t)total);
	of_put32(&w, m->xid);
	of_put16(&w, m->command);
	of_put8(&w, m->type);
	of_put8(&w, 0);
	of_put32(&w, m->group_id);
	for (unsigned i = 0; i < m->nbuckets; i++)
		bucket_put(&w, &m->buckets[i], bucket_len(&m->buckets[i]));
	return w.overflow ? -ENOBUFS : (ssize_t)w.len;
}

int of_group_mp_parse(const uint8_t *buf, size_t len, uint16_t *mp_type, uint32_t *group_id,
		      struct of_fault *f)
{
	if (len < 16 || buf[0] != OF_VERSION_1_3 || buf[1] != MP_REQUEST)
		return -ENOENT;
	uint16_t t = of_get16(buf + 8);
	if (t != OFPMP13_GROUP && t != OFPMP13_GROUP_DESC && t != OFPMP13_GROUP_FEATURES)
		return -ENOENT;
	size_t body = len - 16;
	if ((t == OFPMP13_GROUP && body != 8) || (t != OFPMP13_GROUP && body != 0))
		return fault(f, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, "group multipart body length");
	*mp_type = t;
	*group_id = t == OFPMP13_GROUP ? of_get32(buf + 16) : OFPG_ALL;
	return 0;
}

void of_group_mp_begin(uint8_t *buf, uint32_t xid, uint16_t mp_type)
{
	buf[0] = OF_VERSION_1_3;
	buf[1] = MP_REPLY;
	of_set16(buf + 2, 16);
	of_set32(buf + 4, xid);
	of_set16(buf + 8, mp_type);
	of_set16(buf + 10, 0);
	memset(buf + 12, 0, 4);
}

void of_group_mp_end(uint8_t *buf, size_t len, bool more)
{
	of_set16(buf + 2, (uint16_t)len);
	of_set16(buf + 10, more ? OFPMPF_MORE : 0);
}

ssize_t of_group_stats_put(uint8_t *p, size_t cap, const struct of_group_stats *s)
{
	size_t total = 40 + 16 * (size_t)s->nbuckets;
	if (total > cap || total > 0xffff)
		return -ENOBUFS;
	struct of_wbuf w = of_wbuf_init(p, cap);
	of_put16(&w, (uint16_t)total);
	of_put_zeros(&w, 2);
	of_put32(&w, s->group_id);
	of_put32(&w, s->ref_count);
	of_put_zeros(&w, 4);
	of_put64(&w, s->packet_count);
	of_put64(&w, s->byte_count);
	of_put32(&w, s->duration_sec);
	of_put32(&w, s->duration_nsec);
	for (unsigned i = 0; i < s->nbuckets; i++) {
		of_put64(&w, s->bucket_pkts[i]);
		of_put64(&w, s->bucket_bytes[i]);
	}
	return (ssize_t)w.len;
}

ssize_t of_group_desc_put(uint8_t *p, size_t cap, const struct of_group_desc *d)
{
	bool ok;
	size_t total = 8 + buckets_len(d->buckets, d->nbuckets, &ok);
	if (!ok || total > 0xffff)
		return -EINVAL;
	if (total > cap)
		return -ENOBUFS;
	struct of_wbuf w = of_wbuf_init(p, cap);
	of_put16(&w, (uint16_t)total);
	of_put8(&w, d->type);
	of_put8(&w, 0);
	of_put32(&w, d->group_id);
	for (unsigned i = 0; i < d->nbuckets; i++)
		bucket_put(&w, &d->buckets[i], bucket_len(&d->buckets[i]));
	return (ssize_t)w.len;
}

ssize_t of_group_features_put(uint8_t *p, size_t cap, const struct of_group_features *g)
{
	if (cap < 40)
		return -ENOBUFS;
	struct of_wbuf w = of_wbuf_init(p, cap);
	of_put32(&w, g->types);
	of_put32(&w, g->capabilities);
	for (unsigned i = 0; i < 4; i++)
		of_put32(&w, g->max_groups[i]);
	for (unsigned i = 0; i < 4; i++)
		of_put32(&w, g->actions[i]);
	return (ssize_t)w.len;
}
