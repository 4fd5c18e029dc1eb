/*
 * tests/openflow/test_of_session.c: the controller-side session state machine, fed the
 * bytes a switch (OVS, per TESTBED.md) sends: handshake in 1.3 and 1.0, connect-time setup
 * in order, echo, app messages in stream order, partial input, and every way the handshake
 * or the stream can fail (with the ERROR sent and the close decision).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "of.h"
#include "of_session.h"

static uint8_t outbuf[1 << 16];

struct seen {
	bool refuse; /* push back every app message */
	unsigned n;
	enum of_type types[16];
	uint32_t xids[16];
};

static bool app(void *arg, struct of_session *s, const struct of_msg *m, const uint8_t *raw,
		size_t raw_len, struct of_out *out)
{
	(void)s;
	(void)out;
	cr_assert_eq(raw_len, of_get16(raw + 2)); /* the message's own bytes */
	cr_assert_eq(of_get32(raw + 4), m->xid);
	struct seen *a = arg;
	if (a->refuse)
		return false;
	if (a->n < 16) {
		a->types[a->n] = m->type;
		a->xids[a->n++] = m->xid;
	}
	return true;
}

/* Splits out->p into messages: types[i], returns how many; clears out. */
static unsigned drain(struct of_out *out, struct of_msg *msgs, unsigned max)
{
	unsigned n = 0;
	size_t off = 0;
	while (off < out->len && n < max) {
		struct of_frame f;
		of_frame(&(struct of_framer){0}, out->p + off, out->len - off, &f);
		cr_assert_eq(f.kind, OF_FRAME_MSG);
		struct of_fault fault;
		cr_assert_eq(of_parse(out->p + off, f.len, &msgs[n], &fault), 0, "%s", fault.why);
		n++;
		off += f.len;
	}
	out->len = 0;
	return n;
}

static size_t feed(struct of_session *s, const struct of_msg *m, struct seen *a,
		   struct of_out *out, bool *close)
{
	uint8_t b[2048];
	ssize_t n = of_serialize(m, b, sizeof(b));
	cr_assert_gt(n, 0);
	return of_session_input(s, b, (size_t)n, app, a, out, close);
}

/* Runs the handshake as a switch offering `bitmap` in a HELLO of header version hv. */
static void handshake(struct of_session *s, struct of_out *out, uint8_t hv, uint32_t bitmap,
		      uint8_t want_version)
{
	struct of_msg msgs[16];
	bool close;
	struct seen a = {0};
	cr_assert_eq(of_session_start(s, 0, 0, out), 0);
	cr_assert_eq(drain(out, msgs, 16), 1);
	cr_assert_eq(msgs[0].type, OF_HELLO);
	cr_assert_eq(msgs[0].version, OF_VERSION_1_3);
	cr_assert_eq(msgs[0].u.hello.bitmap, OF_VERSIONS_SUPPORTED);

	struct of_msg h = {.version = hv, .type = OF_HELLO, .xid = 77};
	h.u.hello.has_bitmap = bitmap != 0;
	h.u.hello.bitmap = bitmap;
	feed(s, &h, &a, out, &close);
	cr_assert_not(close);
	cr_assert_eq(s->state, OF_SESSION_FEATURES_WAIT);
	cr_assert_eq(s->framer.version, want_version);
	cr_assert_eq(drain(out, msgs, 16), 1);
	cr_assert_eq(msgs[0].type, OF_FEATURES_REQUEST);
	cr_assert_eq(msgs[0].version, want_version);

	struct of_msg fr = {.version = want_version, .type = OF_FEATURES_REPLY, .xid = msgs[0].xid};
	fr.u.features.datapath_id = 0xabcdef;
	fr.u.features.n_buffers = 0;
	fr.u.features.n_tables = 254;
	feed(s, &fr, &a, out, &close);
	cr_assert_eq(s->state, OF_SESSION_UP);
	cr_assert_eq(s->datapath_id, 0xabcdef);
	cr_assert_eq(a.n, 1); /* the app sees the FEATURES_REPLY too */
	cr_assert_eq(a.types[0], OF_FEATURES_REPLY);

	unsigned n = drain(out, msgs, 16);
	bool v13 = want_version == OF_VERSION_1_3;
	cr_assert_eq(n, v13 ? 5 : 3);
	unsigned i = 0;
	cr_assert_eq(msgs[i].type, OF_FLOW_MOD);
	cr_assert_eq(msgs[i++].u.flow_mod.command, OFPFC_DELETE);
	if (v13) {
		cr_assert_eq(msgs[i].type, OF_FLOW_MOD);
		cr_assert_eq(msgs[i].u.flow_mod.priority, 0);
		cr_assert_eq(msgs[i++].u.flow_mod.actions.a[0].port, OFPP_CONTROLLER);
	}
	cr_assert_eq(msgs[i].type, OF_SET_CONFIG);
	cr_assert_eq(msgs[i++].u.config.miss_send_len, OFPCML_NO_BUFFER);
	if (v13) {
		cr_assert_eq(msgs[i].type, OF_MULTIPART_REQUEST);
		cr_assert_eq(msgs[i++].u.mp_request.mp_type, OF_MP_PORT_DESC);
	}
	cr_assert_eq(msgs[i].type, OF_BARRIER_REQUEST);
	for (unsigned k = 0; k < n; k++)
		cr_assert_eq(msgs[k].version, want_version);
}

Test(of_session, handshake_13_with_bitmap_and_setup_in_order)
{
	struct of_session s;
	struct of_out out = {.p = outbuf, .cap = sizeof(outbuf)};
	handshake(&s, &out, 0x06, (1u << 1) | (1u << 4) | (1u << 6), OF_VERSION_1_3);
}

Test(of_session, handshake_10_switch_without_bitmap)
{
	struct of_session s;
	struct of_out out = {.p = outbuf, .cap = sizeof(outbuf)};
	handshake(&s, &out, OF_VERSION_1_0, 0, OF_VERSION_1_0);
}

Test(of_session, echo_answered_app_messages_in_order_partial_input_kept)
{
	struct of_session s;
	struct of_out out = {.p = outbuf, .cap = sizeof(outbuf)};
	handshake(&s, &out, OF_VERSION_1_3, 0, OF_VERSION_1_3);
	/* ECHO_REQUEST + PORT_STATUS + PACKET_IN in one buffer, the last one cut short. */
	uint8_t b[1024];
	size_t n = 0;
	struct of_msg e = {.version = 4, .type = OF_ECHO_REQUEST, .xid = 5};
	e.u.echo.data = (const uint8_t *)"ping";
	e.u.echo.data_len = 4;
	n += (size_t)of_serialize(&e, b + n, sizeof(b) - n);
	struct of_msg ps = {.version = 4, .type = OF_PORT_STATUS, .xid = 6};
	n += (size_t)of_serialize(&ps, b + n, sizeof(b) - n);
	uint8_t frame[60] = {0};
	struct of_msg pi = {.version = 4, .type = OF_PACKET_IN, .xid = 7};
	pi.u.packet_in.buffer_id = OFP_NO_BUFFER;
	pi.u.packet_in.match.fields = OF_MATCH_IN_PORT;
	pi.u.packet_in.match.in_port = 1;
	pi.u.packet_in.data = frame;
	pi.u.packet_in.data_len = 60;
	size_t pi_start = n;
	n += (size_t)of_serialize(&pi, b + n, sizeof(b) - n);

	struct seen a = {0};
	bool close;
	size_t used = of_session_input(&s, b, n - 10, app, &a, &out, &close);
	cr_assert_not(close);
	cr_assert_eq(used, pi_start); /* the cut PACKET_IN waits for its bytes */
	cr_assert_eq(a.n, 1);
	cr_assert_eq(a.types[0], OF_PORT_STATUS);
	struct of_msg msgs[4];
	cr_assert_eq(drain(&out, msgs, 4), 1);
	cr_assert_eq(msgs[0].type, OF_ECHO_REPLY);
	cr_assert_eq(msgs[0].xid, 5);
	cr_assert_eq(msgs[0].u.echo.data_len, 4);
	a.refuse = true; /* downstream full: nothing is consumed, the PACKET_IN is kept */
	cr_assert_eq(of_session_input(&s, b + used, n - used, app, &a, &out, &close), 0);
	cr_assert_not(close);
	a.refuse = false;
	cr_assert_eq(of_session_input(&s, b + used, n - used, app, &a, &out, &close), n - used);
	cr_assert_eq(a.n, 2);
	cr_assert_eq(a.types[1], OF_PACKET_IN);
	cr_assert_eq(a.xids[1], 7);
}

Test(of_session, no_common_version_fails_the_hello_and_closes)
{
	struct of_session s;
	struct of_out out = {.p = outbuf, .cap = sizeof(outbuf)};
	cr_assert_eq(of_session_start(&s, 0, 0, &out), 0);
	out.len = 0;
	struct of_msg h = {.version = 0x03, .type = OF_HELLO, .xid = 1};
	h.u.hello.has_bitmap = true;
	h.u.hello.bitmap = 1u << 3; /* 1.2 only */
	bool close;
	struct seen a = {0};
	feed(&s, &h, &a, &out, &close);
	cr_assert(close);
	cr_assert_eq(s.state, OF_SESSION_CLOSED);
	/* The ERROR goes out in the peer's version (3), which of_parse does not read: check the
	 * bytes. header(v3, ERROR, len 12 + 16 bytes of the HELLO), HELLO_FAILED, INCOMPATIBLE */
	cr_assert_eq(out.len, 12 + 16);
	cr_assert_eq(outbuf[0], 0x03);
	cr_assert_eq(outbuf[1], 1);
	cr_assert_eq(of_get16(outbuf + 2), 28);
	cr_assert_eq(of_get32(outbuf + 4), 1);
	cr_assert_eq(of_get16(outbuf + 8), OFPET_HELLO_FAILED);
	cr_assert_eq(of_get16(outbuf + 10), OFPHFC_INCOMPATIBLE);
	out.len = 0;
	/* nothing more is read once closed */
	cr_assert_eq(feed(&s, &h, &a, &out, &close), 0);
	cr_assert(close);
}

Test(of_session, first_message_not_hello_closes)
{
	struct of_session s;
	struct of_out out = {.p = outbuf, .cap = sizeof(outbuf)};
	of_session_start(&s, 0, 0, &out);
	out.len = 0;
	struct of_msg e = {.version = 4, .type = OF_ECHO_REQUEST, .xid = 1};
	bool close;
	struct seen a = {0};
	feed(&s, &e, &a, &out, &close);
	cr_assert(close);
	struct of_msg msgs[2];
	cr_assert_eq(drain(&out, msgs, 2), 1);
	cr_assert_eq(msgs[0].u.error.type, OFPET_HELLO_FAILED);
	cr_assert_eq(a.n, 0);
}

Test(of_session, stream_faults_after_the_handshake)
{
	struct of_session s;
	struct of_out out = {.p = outbuf, .cap = sizeof(outbuf)};
	handshake(&s, &out, OF_VERSION_1_3, 0, OF_VERSION_1_3);
	struct seen a = {0};
	bool close;
	struct of_msg msgs[4];
	/* wrong version: BAD_VERSION, skipped, still open */
	uint8_t v10[8] = {0x01, 0x02, 0x00, 0x08, 0, 0, 0, 9};
	cr_assert_eq(of_session_input(&s, v10, 8, app, &a, &out, &close), 8);
	cr_assert_not(close);
	cr_assert_eq(drain(&out, msgs, 4), 1);
	cr_assert_eq(msgs[0].u.error.code, OFPBRC_BAD_VERSION);
	cr_assert_eq(msgs[0].xid, 9);
	/* unknown type: BAD_TYPE, still open */
	uint8_t unk[8] = {0x04, 99, 0x00, 0x08, 0, 0, 0, 10};
	cr_assert_eq(of_session_input(&s, unk, 8, app, &a, &out, &close), 8);
	cr_assert_not(close);
	cr_assert_eq(drain(&out, msgs, 4), 1);
	cr_assert_eq(msgs[0].u.error.code, OFPBRC_BAD_TYPE);
	/* header length 4: BAD_LEN and close */
	uint8_t lie[8] = {0x04, 10, 0x00, 0x04, 0, 0, 0, 11};
	of_session_input(&s, lie, 8, app, &a, &out, &close);
	cr_assert(close);
	cr_assert_eq(drain(&out, msgs, 4), 1);
	cr_assert_eq(msgs[0].u.error.code, OFPBRC_BAD_LEN);
	cr_assert_eq(a.n, 0);
	cr_assert_eq(s.errors_sent, 3);
}

Test(of_session, offering_only_10_and_nothing_we_speak)
{
	struct of_session s;
	struct of_out out = {.p = outbuf, .cap = sizeof(outbuf)};
	cr_assert_eq(of_session_start(&s, 1u << 5, 0, &out), -EINVAL); /* 1.4 only: not ours */
	cr_assert_eq(of_session_start(&s, (1u << OF_VERSION_1_0) | (1u << 5), 0, &out), 0);
	cr_assert_eq(s.versions, 1u << OF_VERSION_1_0);
	cr_assert_eq(out.len, 16);
	cr_assert_eq(outbuf[0], OF_VERSION_1_0); /* HELLO in 1.0 (its bitmap names 1.0 alone) */
	cr_assert_eq(outbuf[15], 1u << OF_VERSION_1_0);
	out.len = 0;
	struct of_msg h = {.version = OF_VERSION_1_3, .type = OF_HELLO, .xid = 1};
	struct seen a = {0};
	bool close;
	feed(&s, &h, &a, &out, &close); /* OVS offering up to 1.3 without a bitmap */
	cr_assert_not(close);
	cr_assert_eq(s.framer.version, OF_VERSION_1_0);
}

Test(of_session, full_output_closes_instead_of_growing)
{
	struct of_session s;
	uint8_t small[64];
	struct of_out out = {.p = small, .cap = sizeof(small)};
	of_session_start(&s, 0, 0, &out);
	struct of_msg h = {.version = 4, .type = OF_HELLO, .xid = 1};
	struct seen a = {0};
	bool close;
	feed(&s, &h, &a, &out, &close);
	cr_assert_not(close);
	struct of_msg fr = {.version = 4, .type = OF_FEATURES_REPLY, .xid = 2};
	feed(&s, &fr, &a, &out, &close); /* setup needs ~170 bytes: does not fit in 64 */
	cr_assert(close);
}
