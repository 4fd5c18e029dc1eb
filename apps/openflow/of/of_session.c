/*
 * apps/openflow/of/of_session.c: the controller side of a switch connection (see
 * of_session.h): handshake, connect-time setup, echo, faults; the rest goes to the app.
 */
#include <errno.h>
#include <string.h>

#include "of_session.h"
#include "of_wire.h"

/* Appends one message built by `n` bytes at out->p + out->len (a builder's return value). */
static int commit(struct of_out *out, ssize_t n)
{
	if (n < 0)
		return (int)n;
	out->len += (size_t)n;
	return 0;
}

#define ROOM(out) ((out)->p + (out)->len), ((out)->cap - (out)->len)

int of_session_send(struct of_session *s, struct of_msg *m, struct of_out *out)
{
	m->version = s->framer.version;
	return commit(out, of_serialize(m, ROOM(out)));
}

int of_session_start(struct of_session *s, uint32_t versions, uint32_t max_len,
		     struct of_out *out)
{
	memset(s, 0, sizeof(*s));
	s->versions = (versions ? versions : OF_VERSIONS_SUPPORTED) & OF_VERSIONS_SUPPORTED;
	if (!s->versions) {
		s->state = OF_SESSION_CLOSED;
		return -EINVAL;
	}
	s->framer.max_len = max_len;
	s->next_xid = 1;
	s->state = OF_SESSION_HELLO_WAIT;
	uint8_t highest = (uint8_t)(31 - __builtin_clz(s->versions));
	return commit(out, of_build_hello(ROOM(out), highest, s->next_xid++, s->versions));
}

/* The ERROR for a fault; closes the session when the fault says so. */
static int reply_fault(struct of_session *s, const struct of_fault *f, const uint8_t *msg,
		       size_t len, struct of_out *out)
{
	uint8_t v = s->framer.version ? s->framer.version : (len ? msg[0] : OF_VERSION_1_3);
	s->errors_sent++;
	if (f->close)
		s->state = OF_SESSION_CLOSED;
	return commit(out, of_build_error_reply(ROOM(out), v, f, msg, len));
}

/* What every switch gets once its datapath id is known. */
static int setup(struct of_session *s, struct of_out *out)
{
	uint8_t v = s->framer.version;
	int rc = s->keep_flows ? 0 : commit(out, of_build_delete_all(ROOM(out), v, s->next_xid++));
	if (!rc && v == OF_VERSION_1_3)
		rc = commit(out, of_build_table_miss(ROOM(out), s->next_xid++));
	struct of_msg m = {.version = v, .type = OF_SET_CONFIG, .xid = s->next_xid++};
	m.u.config.miss_send_len = OFPCML_NO_BUFFER;
	if (!rc)
		rc = commit(out, of_serialize(&m, ROOM(out)));
	if (!rc && v == OF_VERSION_1_3) {
		struct of_msg pd = {.version = v, .type = OF_MULTIPART_REQUEST, .xid = s->next_xid++};
		pd.u.mp_request.mp_type = OF_MP_PORT_DESC;
		rc = commit(out, of_serialize(&pd, ROOM(out)));
	}
	if (!rc)
		rc = commit(out, of_build_simple(ROOM(out), v, OF_BARRIER_REQUEST, s->next_xid++));
	return rc;
}

/* One framed message. Returns 0, 1 when the app pushed back, or -ENOBUFS when out is full.
 * (A pushed-back message is offered again: handling it twice must be harmless, which holds
 * because the app only sees messages the session does not act on itself.) */
static int one(struct of_session *s, const uint8_t *msg, size_t len, of_session_cb cb,
	       void *arg, struct of_out *out)
{
	struct of_msg m;
	struct of_fault f;
	s->rx_msgs++;
	if (of_parse(msg, len, &m, &f) != 0) {
		if (s->state == OF_SESSION_HELLO_WAIT && msg[1] == 0)
			f.close = true; /* a HELLO we cannot read: nothing to agree on */
		return reply_fault(s, &f, msg, len, out);
	}
	if (s->state == OF_SESSION_HELLO_WAIT) {
		int v = m.type == OF_HELLO ? of_negotiate(s->versions, &m) : -EPROTO;
		if (v < 0) {
			of_fault_set(&f, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, true,
				     m.type == OF_HELLO ? "no common OpenFlow version"
						: "first message is not a HELLO");
			return reply_fault(s, &f, msg, len, out);
		}
		s->framer.version = (uint8_t)v;
		s->state = OF_SESSION_FEATURES_WAIT;
		return commit(out, of_build_simple(ROOM(out), (uint8_t)v, OF_FEATURES_REQUEST,
						   s->next_xid++));
	}
	switch (m.type) {
	case OF_HELLO:
		return 0; /* a second HELLO changes nothing */
	case OF_ECHO_REQUEST: {
		struct of_msg r = {.version = m.version, .type = OF_ECHO_REPLY, .xid = m.xid};
		r.u.echo = m.u.echo;
		return commit(out, of_serialize(&r, ROOM(out)));
	}
	case OF_ECHO_REPLY:
		return 0;
	case OF_FEATURES_REPLY:
		if (s->state == OF_SESSION_FEATURES_WAIT) {
			s->datapath_id = m.u.features.datapath_id;
			s->n_buffers = m.u.features.n_buffers;
			s->n_tables = m.u.features.n_tables;
			s->state = OF_SESSION_UP;
			int rc = setup(s, out);
			if (rc)
				return rc;
		}
		break; /* the app sees it too (1.0 carries the ports) */
	default:
		break;
	}
	if (cb && !cb(arg, s, &m, msg, len, out))
		return 1; /* pushed back: consume nothing, stop */
	return 0;
}

size_t of_session_input(struct of_session *s, const uint8_t *buf, size_t n, of_session_cb cb,
			void *arg, struct of_out *out, bool *close)
{
	size_t off = 0;
	*close = s->state == OF_SESSION_CLOSED;
	while (!*close && off < n) {
		struct of_frame fr;
		of_frame(&s->framer, buf + off, n - off, &fr);
		if (fr.kind == OF_FRAME_NEED_MORE)
			break;
		int rc;
		if (fr.kind == OF_FRAME_BAD) {
			size_t have = fr.len && fr.len <= n - off ? fr.len : n - off;
			if (fr.len < 8) /* a length below the header: still echo the whole header (xid) */
				have = n - off < 8 ? n - off : 8;
			rc = reply_fault(s, &fr.fault, buf + off, have, out);
			if (fr.fault.close)
				break;
		} else {
			rc = one(s, buf + off, fr.len, cb, arg, out);
			if (rc == 1) {
				s->rx_msgs--; /* counted again when it is offered again */
				break;
			}
		}
		if (rc) { /* out is full: the peer is not reading its replies */
			s->state = OF_SESSION_CLOSED;
			break;
		}
		off += fr.len;
		*close = s->state == OF_SESSION_CLOSED;
	}
	*close = s->state == OF_SESSION_CLOSED;
	return off;
}
