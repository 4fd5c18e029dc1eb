/*
 * tests/fuzz/fuzz_of_parser.c: libFuzzer target for the OpenFlow protocol module.
 *
 * The input is a byte stream as a switch would send it. It goes through the same loop a
 * connection runs: of_frame() until it needs more bytes or must close, each framed message
 * copied into an exact-size heap buffer (so ASan sees any over-read) and parsed; a HELLO
 * negotiates the version the framer then enforces; a fault builds its ERROR reply. Every
 * message that parses is serialized, parsed again and serialized again: the two outputs must
 * be byte-identical (the parser and serializer agree), or the target traps.
 *
 * Build and run: `make fuzz` (clang, -fsanitize=fuzzer,address,undefined; see docs/openflow.md).
 */
#include <stdlib.h>
#include <string.h>

#include "of.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t out1[OF_MAX_MSG_LEN + 64], out2[OF_MAX_MSG_LEN + 64];

/* Reads every array item the parser said is there. */
static void walk_arrays(const struct of_msg *m)
{
	struct of_port p;
	struct of_port_stats s;
	struct of_flow_stats f;
	if (m->type == OF_FEATURES_REPLY)
		for (unsigned i = 0; i < m->u.features.ports.n; i++)
			if (of_port_at(m->version, &m->u.features.ports, i, &p))
				__builtin_trap();
	if (m->type != OF_MULTIPART_REPLY)
		return;
	const struct of_array *a = &m->u.mp_reply.body;
	unsigned cur = 0, n = 0;
	switch (m->u.mp_reply.mp_type) {
	case OF_MP_PORT_DESC:
		for (unsigned i = 0; i < a->n; i++)
			if (of_port_at(m->version, a, i, &p))
				__builtin_trap();
		break;
	case OF_MP_PORT_STATS:
		for (unsigned i = 0; i < a->n; i++)
			if (of_port_stats_at(m->version, a, i, &s))
				__builtin_trap();
		break;
	case OF_MP_FLOW:
		while (of_flow_stats_next(m->version, a, &cur, &f))
			n++;
		if (n != a->n)
			__builtin_trap();
		break;
	}
}

static void one_message(const uint8_t *msg, size_t len)
{
	struct of_msg m, m2;
	struct of_fault f;
	if (of_parse(msg, len, &m, &f) != 0) {
		if (!f.why)
			__builtin_trap();
		of_build_error_reply(out1, sizeof(out1), OF_VERSION_1_3, &f, msg, len);
		return;
	}
	walk_arrays(&m);
	ssize_t n1 = of_serialize(&m, out1, sizeof(out1));
	if (n1 < 0)
		return; /* not expressible again (e.g. a reserved port only 1.3 has) */
	if (of_parse(out1, (size_t)n1, &m2, &f) != 0)
		__builtin_trap(); /* we wrote something we refuse to read */
	walk_arrays(&m2);
	ssize_t n2 = of_serialize(&m2, out2, sizeof(out2));
	if (n2 != n1 || memcmp(out1, out2, (size_t)n1) != 0)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct of_framer fr = {.version = 0, .max_len = OF_MAX_MSG_LEN};
	size_t off = 0;
	while (off < size) {
		struct of_frame fm;
		of_frame(&fr, data + off, size - off, &fm);
		if (fm.kind == OF_FRAME_NEED_MORE)
			break;
		if (fm.kind == OF_FRAME_BAD) {
			if (fm.fault.close || fm.len < OF_HEADER_LEN)
				break;
			off += fm.len;
			continue;
		}
		uint8_t *copy = malloc(fm.len);
		if (!copy)
			return 0;
		memcpy(copy, data + off, fm.len);
		one_message(copy, fm.len);
		struct of_msg m;
		struct of_fault f;
		if (!fr.version && of_parse(copy, fm.len, &m, &f) == 0 && m.type == OF_HELLO) {
			int v = of_negotiate(OF_VERSIONS_SUPPORTED, &m);
			if (v < 0) {
				free(copy);
				break; /* HELLO_FAILED: the connection closes */
			}
			fr.version = (uint8_t)v;
		}
		free(copy);
		off += fm.len;
	}
	return 0;
}
