/*
 * tests/fuzz/fuzz_of_group.c: libFuzzer target for the group messages (of_group.c) and the
 * switch's GROUP_MOD checks (sw_group.c).
 *
 * The input's first byte picks GROUP_MOD or a multipart request; the rest is the message,
 * whose header gets version 1.3, that type and its true length (so the fuzzer spends its
 * time behind the framing), copied into an exact-size heap buffer (ASan sees any over-read
 * of a lying length). A GROUP_MOD that parses must build back into bytes that parse to the
 * same message and build to the same bytes again (else the target traps); it is then
 * carried out against a table holding a few groups (any outcome but a crash is fine) and
 * the GROUP and GROUP_DESC replies are built; a fault must name a reason and never close
 * the connection. The table is emptied after each input.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "of_group.h"
#include "sw.h"
#include "sw_group.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sw_dp dp;
static uint8_t out1[OF_MAX_MSG_LEN], out2[OF_MAX_MSG_LEN], reply[OF_MAX_MSG_LEN];
static struct of_group_mod m1, m2, seed;

static void no_send(void *ctx, const uint8_t *b, size_t n)
{
	(void)ctx;
	if (n < 16 || n > OF_MAX_MSG_LEN || of_get16(b + 2) != n)
		__builtin_trap(); /* a reply whose header disagrees with its length */
}

/* Groups 1 (all: out 2) and 2 (indirect: group 1) before each input. */
static void seed_groups(void)
{
	bool del;
	uint16_t et, ec;
	memset(&seed, 0, sizeof(seed));
	seed.type = OFPGT_ALL;
	seed.group_id = 1;
	seed.nbuckets = 1;
	seed.buckets[0].watch_port = OFPP_ANY;
	seed.buckets[0].watch_group = OFPG_ANY;
	of_act_output(&seed.buckets[0].actions, 2, 0);
	if (sw_group_mod(dp.groups, &seed, 0, &del, &et, &ec))
		__builtin_trap();
	seed.type = OFPGT_INDIRECT;
	seed.group_id = 2;
	memset(&seed.buckets[0].actions, 0, sizeof(seed.buckets[0].actions));
	of_act_simple(&seed.buckets[0].actions, OF_ACT_GROUP, 1);
	if (sw_group_mod(dp.groups, &seed, 0, &del, &et, &ec))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > OF_MAX_MSG_LEN)
		return 0;
	if (!dp.groups) {
		dp.nports = 3;
		dp.ncores = 1;
		dp.groups = sw_groups_create(&dp); /* no table: retired programs are freed at once */
		if (!dp.groups)
			return 0;
	}
	bool mp = data[0] & 1;
	size_t len = size - 1 < OF_HEADER_LEN ? OF_HEADER_LEN : size - 1;
	uint8_t *msg = calloc(1, len);
	if (!msg)
		return 0;
	memcpy(msg, data + 1, size - 1);
	msg[0] = OF_VERSION_1_3;
	msg[1] = mp ? 18 : OF13_GROUP_MOD;
	msg[2] = (uint8_t)(len >> 8);
	msg[3] = (uint8_t)len;
	struct of_fault f;
	if (mp) {
		uint16_t t;
		uint32_t id;
		int r = of_group_mp_parse(msg, len, &t, &id, &f);
		if (r == -EBADMSG && (!f.why || f.close))
			__builtin_trap();
		free(msg);
		return 0;
	}
	seed_groups();
	int r = of_group_mod_parse(msg, len, &m1, &f);
	free(msg);
	if (r == -EBADMSG) {
		if (!f.why || f.close)
			__builtin_trap();
	} else if (r != 0) {
		__builtin_trap(); /* a GROUP_MOD header is never "not mine" */
	} else {
		ssize_t n1 = of_group_mod_build(&m1, out1, sizeof(out1));
		if (n1 >= 0) {
			if (of_group_mod_parse(out1, (size_t)n1, &m2, &f) != 0)
				__builtin_trap(); /* we wrote something we refuse to read */
			ssize_t n2 = of_group_mod_build(&m2, out2, sizeof(out2));
			if (n2 != n1 || memcmp(out1, out2, (size_t)n1))
				__builtin_trap(); /* parser and builder disagree */
		}
		bool del;
		uint16_t et, ec;
		(void)sw_group_mod(dp.groups, &m1, 1, &del, &et, &ec);
		sw_group_multipart(dp.groups, NULL, OFPMP13_GROUP, OFPG_ALL, 1, 2, reply, no_send,
				   NULL);
		sw_group_multipart(dp.groups, NULL, OFPMP13_GROUP_DESC, OFPG_ALL, 1, 2, reply,
				   no_send, NULL);
	}
	bool del;
	uint16_t et, ec;
	memset(&seed, 0, sizeof(seed));
	seed.command = OFPGC_DELETE;
	seed.group_id = OFPG_ALL;
	if (sw_group_mod(dp.groups, &seed, 0, &del, &et, &ec) || dp.groups->n)
		__builtin_trap();
	return 0;
}
