/*
 * tests/ofswitch/test_sw_role.c: the agent's role and async rules (sw_role.c) without
 * sockets: generation ids (stale ones refused, wrap-around, EQUAL and NOCHANGE ignore
 * them), one MASTER at a time (a new one demotes the old), bad roles refused, and the
 * default async config of OpenFlow 1.3.5 (a slave gets PORT_STATUS only).
 */
#include <criterion/criterion.h>

#include "sw.h"

enum { N = 4 };

static int ask(struct sw_roles *r, uint32_t *roles, unsigned who, uint32_t role, uint64_t gen,
	       uint32_t *got_role, uint64_t *got_gen)
{
	return sw_role_request(r, roles, N, who, role, gen, got_role, got_gen);
}

Test(sw_role, master_change_demotes_and_stale_ids_are_refused)
{
	struct sw_roles r = {0};
	uint32_t roles[N] = {OFPCR_ROLE_EQUAL, OFPCR_ROLE_EQUAL, OFPCR_ROLE_EQUAL, 0};
	uint32_t role;
	uint64_t gen;
	/* Before any MASTER/SLAVE request every id is accepted. */
	cr_assert_eq(ask(&r, roles, 0, OFPCR_ROLE_MASTER, 100, &role, &gen), -1);
	cr_assert(role == OFPCR_ROLE_MASTER && gen == 100);
	cr_assert_eq(ask(&r, roles, 1, OFPCR_ROLE_SLAVE, 99, &role, &gen), OFPRRFC_STALE);
	cr_assert_eq(roles[1], OFPCR_ROLE_EQUAL, "a refused request changes nothing");
	cr_assert_eq(ask(&r, roles, 1, OFPCR_ROLE_MASTER, 100, &role, &gen), -1, "equal id: ok");
	cr_assert_eq(roles[0], OFPCR_ROLE_SLAVE, "the old master is a slave now");
	cr_assert_eq(roles[1], OFPCR_ROLE_MASTER);
	cr_assert_eq(roles[2], OFPCR_ROLE_EQUAL, "an equal stays equal");
	/* NOCHANGE reads the role and the id; its own id is ignored. */
	cr_assert_eq(ask(&r, roles, 0, OFPCR_ROLE_NOCHANGE, 1, &role, &gen), -1);
	cr_assert(role == OFPCR_ROLE_SLAVE && gen == 100);
	/* EQUAL ignores the id too and does not move it. */
	cr_assert_eq(ask(&r, roles, 2, OFPCR_ROLE_EQUAL, 5, &role, &gen), -1);
	cr_assert(role == OFPCR_ROLE_EQUAL && gen == 100);
	/* Half the circle ahead is behind (signed difference INT64_MIN). */
	cr_assert_eq(ask(&r, roles, 0, OFPCR_ROLE_MASTER, 100 + (1ull << 63), &role, &gen),
		     OFPRRFC_STALE);
	cr_assert_eq(roles[1], OFPCR_ROLE_MASTER);
	/* Bad roles. */
	cr_assert_eq(ask(&r, roles, 0, 4, 200, &role, &gen), OFPRRFC_BAD_ROLE);
	cr_assert_eq(ask(&r, roles, 0, 0xffffffffu, 200, &role, &gen), OFPRRFC_BAD_ROLE);
	cr_assert_eq(r.gen, 100, "refused requests do not move the id");
}

Test(sw_role, generation_ids_wrap)
{
	struct sw_roles r = {0};
	uint32_t roles[N] = {OFPCR_ROLE_EQUAL, OFPCR_ROLE_EQUAL};
	uint32_t role;
	uint64_t gen;
	cr_assert_eq(ask(&r, roles, 0, OFPCR_ROLE_MASTER, UINT64_MAX - 1, &role, &gen), -1);
	cr_assert_eq(ask(&r, roles, 1, OFPCR_ROLE_MASTER, 2, &role, &gen), -1, "2 follows 2^64-2");
	cr_assert_eq(ask(&r, roles, 0, OFPCR_ROLE_MASTER, UINT64_MAX, &role, &gen), OFPRRFC_STALE);
	cr_assert_eq(roles[1], OFPCR_ROLE_MASTER);
	cr_assert_eq(roles[0], OFPCR_ROLE_SLAVE);
}

Test(sw_role, default_async_config)
{
	struct sw_async as;
	sw_async_default(&as);
	for (uint8_t reason = 0; reason < 2; reason++) { /* NO_MATCH, ACTION */
		cr_assert(sw_async_wants(&as, OFPCR_ROLE_MASTER, SW_ASYNC_PACKET_IN, reason));
		cr_assert(sw_async_wants(&as, OFPCR_ROLE_EQUAL, SW_ASYNC_PACKET_IN, reason));
		cr_assert(!sw_async_wants(&as, OFPCR_ROLE_SLAVE, SW_ASYNC_PACKET_IN, reason));
	}
	cr_assert(!sw_async_wants(&as, OFPCR_ROLE_MASTER, SW_ASYNC_PACKET_IN, 2), "INVALID_TTL");
	for (uint8_t reason = 0; reason < 4; reason++) {
		cr_assert(sw_async_wants(&as, OFPCR_ROLE_EQUAL, SW_ASYNC_FLOW_REMOVED, reason));
		cr_assert(!sw_async_wants(&as, OFPCR_ROLE_SLAVE, SW_ASYNC_FLOW_REMOVED, reason));
	}
	for (uint8_t reason = 0; reason < 3; reason++) {
		cr_assert(sw_async_wants(&as, OFPCR_ROLE_MASTER, SW_ASYNC_PORT_STATUS, reason));
		cr_assert(sw_async_wants(&as, OFPCR_ROLE_SLAVE, SW_ASYNC_PORT_STATUS, reason));
	}
	cr_assert(!sw_async_wants(&as, OFPCR_ROLE_MASTER, SW_ASYNC_PORT_STATUS, 40), "reason >= 32");
	cr_assert(!sw_async_wants(&as, OFPCR_ROLE_MASTER, 7, 0), "no such kind");
	/* SET_ASYNC can give a slave PACKET_IN. */
	as.mask[SW_ASYNC_PACKET_IN][1] = 1u << 1;
	cr_assert(sw_async_wants(&as, OFPCR_ROLE_SLAVE, SW_ASYNC_PACKET_IN, 1));
	cr_assert(!sw_async_wants(&as, OFPCR_ROLE_SLAVE, SW_ASYNC_PACKET_IN, 0));
}
