/*
 * apps/openflow/of/of_build.c: the serializer (struct of_msg -> wire bytes) and the builders
 * for the messages a controller sends most.
 *
 * Everything goes through struct of_wbuf: appends that would pass the buffer set a flag, so
 * each message is written straight through and checked once at the end (-ENOBUFS), then
 * the header's length is patched in. Values a version cannot carry (a 32-bit port in 1.0,
 * PORT_DESC in 1.0, more than 64 KiB) give -EINVAL instead of being silently cut.
 */
#include <errno.h>
#include <string.h>

#include "of_wire.h"

static void put_header(struct of_wbuf *w, uint8_t version, uint8_t wire_type, uint32_t xid)
{
	of_put8(w, version);
	of_put8(w, wire_type);
	of_put16(w, 0); /* length, patched by of_wbuf_finish() */
	of_put32(w, xid);
}

static bool port_fits(uint8_t version, uint32_t port)
{
	return version != OF_VERSION_1_0 || of_port_to10(port) >= 0;
}

/* 1.0 ports go out in 16 bits (callers checked port_fits). */
static void put_port(struct of_wbuf *w, uint8_t version, uint32_t port)
{
	if (version == OF_VERSION_1_0)
		of_put16(w, (uint16_t)of_port_to10(port));
	else
		of_put32(w, port);
}

static int put_features(struct of_wbuf *w, const struct of_msg *m)
{
	const struct of_features *fe = &m->u.features;
	of_put64(w, fe->datapath_id);
	of_put32(w, fe->n_buffers);
	of_put8(w, fe->n_tables);
	if (m->version == OF_VERSION_1_3) {
		of_put8(w, fe->auxiliary_id);
		of_put_zeros(w, 2);
		of_put32(w, fe->capabilities);
		of_put32(w, 0); /* reserved */
		return 0;
	}
	of_put_zeros(w, 3);
	of_put32(w, fe->capabilities);
	of_put32(w, fe->actions);
	for (unsigned i = 0; i < fe->ports.n; i++) {
		struct of_port p;
		if (of_port_at(m->version, &fe->ports, i, &p) || !port_fits(m->version, p.port_no))
			return -EINVAL;
		of_port_put(w, m->version, &p);
	}
	return 0;
}

static int put_packet_in(struct of_wbuf *w, const struct of_msg *m)
{
	const struct of_packet_in *pi = &m->u.packet_in;
	of_put32(w, pi->buffer_id);
	of_put16(w, pi->total_len);
	if (m->version == OF_VERSION_1_0) {
		uint32_t in_port = pi->match.fields & OF_MATCH_IN_PORT ? pi->match.in_port : OFPP_ANY;
		if (!port_fits(m->version, in_port))
			return -EINVAL;
		put_port(w, m->version, in_port);
		of_put8(w, pi->reason);
		of_put8(w, 0);
	} else {
		of_put8(w, pi->reason);
		of_put8(w, pi->table_id);
		of_put64(w, pi->cookie);
		of_match_put(w, m->version, &pi->match);
		of_put_zeros(w, 2);
	}
	of_put_bytes(w, pi->data, pi->data_len);
	return 0;
}

static int put_packet_out(struct of_wbuf *w, const struct of_msg *m)
{
	const struct of_packet_out *po = &m->u.packet_out;
	if (!port_fits(m->version, po->in_port) || !of_actions_fit(m->version, &po->actions))
		return -EINVAL;
	of_put32(w, po->buffer_id);
	put_port(w, m->version, po->in_port);
	of_put16(w, (uint16_t)of_actions_len(m->version, &po->actions));
	if (m->version == OF_VERSION_1_3)
		of_put_zeros(w, 6);
	of_actions_put(w, m->version, &po->actions);
	of_put_bytes(w, po->data, po->data_len);
	return 0;
}

static int put_flow_mod(struct of_wbuf *w, const struct of_msg *m)
{
	const struct of_flow_mod *fm = &m->u.flow_mod;
	if (!port_fits(m->version, fm->out_port) || !of_match_fits(m->version, &fm->match) ||
	    !of_actions_fit(m->version, &fm->actions))
		return -EINVAL;
	if (m->version == OF_VERSION_1_0) {
		of_match_put(w, m->version, &fm->match);
		of_put64(w, fm->cookie);
		of_put16(w, fm->command);
		of_put16(w, fm->idle_timeout);
		of_put16(w, fm->hard_timeout);
		of_put16(w, fm->priority);
		of_put32(w, fm->buffer_id);
		put_port(w, m->version, fm->out_port);
		of_put16(w, fm->flags);
		of_actions_put(w, m->version, &fm->actions);
		return 0;
	}
	of_put64(w, fm->cookie);
	of_put64(w, fm->cookie_mask);
	of_put8(w, fm->table_id);
	of_put8(w, fm->command);
	of_put16(w, fm->idle_timeout);
	of_put16(w, fm->hard_timeout);
	of_put16(w, fm->priority);
	of_put32(w, fm->buffer_id);
	of_put32(w, fm->out_port);
	of_put32(w, fm->out_group);
	of_put16(w, fm->flags);
	of_put_zeros(w, 2);
	of_match_put(w, m->version, &fm->match);
	of_instructions_put(w, &fm->actions);
	of_insts_put(w, &fm->inst);
	return 0;
}

static int put_flow_removed(struct of_wbuf *w, const struct of_msg *m)
{
	const struct of_flow_removed *fr = &m->u.flow_removed;
	if (!of_match_fits(m->version, &fr->match))
		return -EINVAL;
	if (m->version == OF_VERSION_1_0) {
		of_match_put(w, m->version, &fr->match);
		of_put64(w, fr->cookie);
		of_put16(w, fr->priority);
		of_put8(w, fr->reason);
		of_put8(w, 0);
		of_put32(w, fr->duration_sec);
		of_put32(w, fr->duration_nsec);
		of_put16(w, fr->idle_timeout);
		of_put16(w, 0);
		of_put64(w, fr->packet_count);
		of_put64(w, fr->byte_count);
		return 0;
	}
	of_put64(w, fr->cookie);
	of_put16(w, fr->priority);
	of_put8(w, fr->reason);
	of_put8(w, fr->table_id);
	of_put32(w, fr->duration_sec);
	of_put32(w, fr->duration_nsec);
	of_put16(w, fr->idle_timeout);
	of_put16(w, fr->hard_timeout);
	of_put64(w, fr->packet_count);
	of_put64(w, fr->byte_count);
	of_match_put(w, m->version, &fr->match);
	return 0;
}

static int put_mp_request(struct of_wbuf *w, const struct of_msg *m)
{
	const struct of_mp_request *r = &m->u.mp_request;
	of_put16(w, (uint16_t)r->mp_type);
	of_put16(w, r->flags);
	if (m->version == OF_VERSION_1_3)
		of_put_zeros(w, 4);
	switch (r->mp_type) {
	case OF_MP_FLOW:
		if (!port_fits(m->version, r->out_port) || !of_match_fits(m->version, &r->match))
			return -EINVAL;
		if (m->version == OF_VERSION_1_0) {
			of_match_put(w, m->version, &r->match);
			of_put8(w, r->table_id);
			of_put8(w, 0);
			put_port(w, m->version, r->out_port);
			return 0;
		}
		of_put8(w, r->table_id);
		of_put_zeros(w, 3);
		of_put32(w, r->out_port);
		of_put32(w, r->out_group);
		of_put_zeros(w, 4);
		of_put64(w, r->cookie);
		of_put64(w, r->cookie_mask);
		of_match_put(w, m->version, &r->match);
		return 0;
	case OF_MP_PORT_STATS:
		if (!port_fits(m->version, r->port_no))
			return -EINVAL;
		put_port(w, m->version, r->port_no);
		of_put_zeros(w, m->version == OF_VERSION_1_0 ? 6 : 4);
		return 0;
	case OF_MP_PORT_DESC:
		return m->version == OF_VERSION_1_0 ? -EINVAL : 0;
	}
	return -EINVAL;
}

static void put_port_stats(struct of_wbuf *w, uint8_t version, const struct of_port_stats *s)
{
	put_port(w, version, s->port_no);
	of_put_zeros(w, version == OF_VERSION_1_0 ? 6 : 4);
	const uint64_t c[] = {s->rx_packets, s->tx_packets, s->rx_bytes, s->tx_bytes,
			      s->rx_dropped, s->tx_dropped, s->rx_errors, s->tx_errors,
			      s->rx_frame_err, s->rx_over_err, s->rx_crc_err, s->collisions};
	for (unsigned k = 0; k < 12; k++)
		of_put64(w, c[k]);
	if (version != OF_VERSION_1_0) {
		of_put32(w, s->duration_sec);
		of_put32(w, s->duration_nsec);
	}
}

static int put_flow_stats(struct of_wbuf *w, uint8_t version, const struct of_flow_stats *s)
{
	if (!of_match_fits(version, &s->match) || !of_actions_fit(version, &s->actions))
		return -EINVAL;
	size_t start = w->len;
	of_put16(w, 0); /* length, set below */
	of_put8(w, s->table_id);
	of_put8(w, 0);
	if (version == OF_VERSION_1_0) {
		of_match_put(w, version, &s->match);
		of_put32(w, s->duration_sec);
		of_put32(w, s->duration_nsec);
		of_put16(w, s->priority);
		of_put16(w, s->idle_timeout);
		of_put16(w, s->hard_timeout);
		of_put_zeros(w, 6);
		of_put64(w, s->cookie);
		of_put64(w, s->packet_count);
		of_put64(w, s->byte_count);
		of_actions_put(w, version, &s->actions);
	} else {
		of_put32(w, s->duration_sec);
		of_put32(w, s->duration_nsec);
		of_put16(w, s->priority);
		of_put16(w, s->idle_timeout);
		of_put16(w, s->hard_timeout);
		of_put16(w, s->flags);
		of_put_zeros(w, 4);
		of_put64(w, s->cookie);
		of_put64(w, s->packet_count);
		of_put64(w, s->byte_count);
		of_match_put(w, version, &s->match);
		of_instructions_put(w, &s->actions);
		of_insts_put(w, &s->inst);
	}
	if (!w->overflow) {
		if (w->len - start > 0xffff)
			return -EINVAL;
		of_set16(w->p + start, (uint16_t)(w->len - start));
	}
	return 0;
}

static int put_mp_reply(struct of_wbuf *w, const struct of_msg *m)
{
	const struct of_mp_reply *r = &m->u.mp_reply;
	of_put16(w, (uint16_t)r->mp_type);
	of_put16(w, r->flags);
	if (m->version == OF_VERSION_1_3)
		of_put_zeros(w, 4);
	switch (r->mp_type) {
	case OF_MP_PORT_DESC:
		if (m->version == OF_VERSION_1_0)
			return -EINVAL;
		for (unsigned i = 0; i < r->body.n; i++) {
			struct of_port p;
			if (of_port_at(m->version, &r->body, i, &p))
				return -EINVAL;
			of_port_put(w, m->version, &p);
		}
		return 0;
	case OF_MP_PORT_STATS:
		for (unsigned i = 0; i < r->body.n; i++) {
			struct of_port_stats s;
			if (of_port_stats_at(m->version, &r->body, i, &s) ||
			    !port_fits(m->version, s.port_no))
				return -EINVAL;
			put_port_stats(w, m->version, &s);
		}
		return 0;
	case OF_MP_FLOW: {
		struct of_flow_stats s;
		unsigned cur = 0;
		while (of_flow_stats_next(m->version, &r->body, &cur, &s)) {
			int rc = put_flow_stats(w, m->version, &s);
			if (rc)
				return rc;
		}
		return 0;
	}
	}
	return -EINVAL;
}

ssize_t of_serialize(const struct of_msg *m, uint8_t *buf, size_t cap)
{
	int wt = of_type_to_wire(m->version, m->type);
	if (wt < 0)
		return -EINVAL;
	struct of_wbuf w = of_wbuf_init(buf, cap);
	put_header(&w, m->version, (uint8_t)wt, m->xid);
	int rc = 0;
	switch (m->type) {
	case OF_HELLO:
		if (m->u.hello.has_bitmap) {
			of_put16(&w, 1); /* OFPHET_VERSIONBITMAP */
			of_put16(&w, 8);
			of_put32(&w, m->u.hello.bitmap);
		}
		break;
	case OF_ERROR:
		of_put16(&w, m->u.error.type);
		of_put16(&w, m->u.error.code);
		of_put_bytes(&w, m->u.error.data, m->u.error.data_len);
		break;
	case OF_ECHO_REQUEST:
	case OF_ECHO_REPLY:
		of_put_bytes(&w, m->u.echo.data, m->u.echo.data_len);
		break;
	case OF_FEATURES_REQUEST:
	case OF_BARRIER_REQUEST:
	case OF_BARRIER_REPLY:
		break;
	case OF_FEATURES_REPLY:
		rc = put_features(&w, m);
		break;
	case OF_SET_CONFIG:
		of_put16(&w, m->u.config.flags);
		of_put16(&w, m->u.config.miss_send_len);
		break;
	case OF_PACKET_IN:
		rc = put_packet_in(&w, m);
		break;
	case OF_PACKET_OUT:
		rc = put_packet_out(&w, m);
		break;
	case OF_FLOW_MOD:
		rc = put_flow_mod(&w, m);
		break;
	case OF_FLOW_REMOVED:
		rc = put_flow_removed(&w, m);
		break;
	case OF_PORT_STATUS:
		if (!port_fits(m->version, m->u.port_status.port.port_no))
			return -EINVAL;
		of_put8(&w, m->u.port_status.reason);
		of_put_zeros(&w, 7);
		of_port_put(&w, m->version, &m->u.port_status.port);
		break;
	case OF_MULTIPART_REQUEST:
		rc = put_mp_request(&w, m);
		break;
	case OF_MULTIPART_REPLY:
		rc = put_mp_reply(&w, m);
		break;
	case OF_TYPE_COUNT:
		return -EINVAL;
	}
	return rc ? rc : of_wbuf_finish(&w);
}

/* ---- builders ---- */

ssize_t of_build_hello(uint8_t *buf, size_t cap, uint8_t version, uint32_t xid, uint32_t bitmap)
{
	struct of_msg m = {.version = version, .type = OF_HELLO, .xid = xid};
	m.u.hello.bitmap = bitmap;
	m.u.hello.has_bitmap = bitmap != 0;
	return of_serialize(&m, buf, cap);
}

ssize_t of_build_simple(uint8_t *buf, size_t cap, uint8_t version, enum of_type type,
			uint32_t xid)
{
	if (type != OF_FEATURES_REQUEST && type != OF_BARRIER_REQUEST &&
	    type != OF_BARRIER_REPLY && type != OF_ECHO_REQUEST && type != OF_ECHO_REPLY &&
	    type != OF_HELLO)
		return -EINVAL;
	struct of_msg m = {.version = version, .type = type, .xid = xid};
	return of_serialize(&m, buf, cap);
}

ssize_t of_build_get_config_reply(uint8_t *buf, size_t cap, uint32_t xid, uint16_t flags,
				  uint16_t miss_send_len)
{
	/* Same body as SET_CONFIG; only the header's type differs. */
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_SET_CONFIG, .xid = xid};
	m.u.config.flags = flags;
	m.u.config.miss_send_len = miss_send_len;
	ssize_t n = of_serialize(&m, buf, cap);
	if (n > 0)
		buf[1] = OF13_GET_CONFIG_REPLY;
	return n;
}

ssize_t of_build_error(uint8_t *buf, size_t cap, uint8_t version, uint32_t xid, uint16_t type,
		       uint16_t code, const uint8_t *data, size_t data_len)
{
	struct of_msg m = {.version = version, .type = OF_ERROR, .xid = xid};
	m.u.error.type = type;
	m.u.error.code = code;
	m.u.error.data = data;
	m.u.error.data_len = (uint16_t)(data_len < OF_ERROR_DATA_MAX ? data_len : OF_ERROR_DATA_MAX);
	return of_serialize(&m, buf, cap);
}

ssize_t of_build_error_reply(uint8_t *buf, size_t cap, uint8_t version,
			     const struct of_fault *f, const uint8_t *bad, size_t bad_len)
{
	uint32_t xid = bad_len >= OF_HEADER_LEN ? of_get32(bad + 4) : 0;
	return of_build_error(buf, cap, version, xid, f->type, f->code, bad, bad_len);
}

ssize_t of_build_table_miss(uint8_t *buf, size_t cap, uint32_t xid)
{
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_FLOW_MOD, .xid = xid};
	struct of_flow_mod *fm = &m.u.flow_mod;
	fm->command = OFPFC_ADD;
	fm->priority = 0;
	fm->buffer_id = OFP_NO_BUFFER;
	fm->out_port = OFPP_ANY;
	fm->out_group = OFPG_ANY;
	fm->actions.n = 1;
	fm->actions.a[0].port = OFPP_CONTROLLER;
	fm->actions.a[0].max_len = OFPCML_NO_BUFFER;
	return of_serialize(&m, buf, cap);
}

ssize_t of_build_delete_all(uint8_t *buf, size_t cap, uint8_t version, uint32_t xid)
{
	struct of_msg m = {.version = version, .type = OF_FLOW_MOD, .xid = xid};
	struct of_flow_mod *fm = &m.u.flow_mod;
	fm->command = OFPFC_DELETE;
	fm->table_id = OFPTT_ALL;
	fm->buffer_id = OFP_NO_BUFFER;
	fm->out_port = OFPP_ANY;
	fm->out_group = OFPG_ANY;
	return of_serialize(&m, buf, cap);
}

ssize_t of_build_packet_out(uint8_t *buf, size_t cap, uint8_t version, uint32_t xid,
			    uint32_t buffer_id, uint32_t in_port, uint32_t out_port,
			    const uint8_t *data, size_t data_len)
{
	struct of_msg m = {.version = version, .type = OF_PACKET_OUT, .xid = xid};
	struct of_packet_out *po = &m.u.packet_out;
	po->buffer_id = buffer_id;
	po->in_port = in_port;
	po->actions.n = 1;
	po->actions.a[0].port = out_port;
	po->actions.a[0].max_len = 0;
	if (buffer_id == OFP_NO_BUFFER) {
		if (data_len > OF_MAX_MSG_LEN)
			return -EINVAL;
		po->data = data;
		po->data_len = (uint16_t)data_len;
	}
	return of_serialize(&m, buf, cap);
}
