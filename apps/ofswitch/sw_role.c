/*
 * apps/ofswitch/sw_role.c: controller roles and the asynchronous configuration, the rules of
 * OpenFlow 1.3.5 sections 6.3.6 and 7.3.10 without the sockets (the agent keeps one role and
 * one struct sw_async per connection and asks these functions).
 *
 * Roles: every connection starts EQUAL. MASTER and SLAVE requests carry a generation id;
 * the switch keeps the last one it accepted and refuses one behind it (signed 64-bit
 * difference: ids may wrap) with ROLE_REQUEST_FAILED/STALE. EQUAL ignores the id, NOCHANGE
 * only reads. A new MASTER turns every other MASTER into a SLAVE (1.3 has no ROLE_STATUS to
 * tell them; they find out on their next request).
 */
#include "sw.h"

void sw_async_default(struct sw_async *as)
{
	/* reasons: PACKET_IN NO_MATCH 0, ACTION 1, INVALID_TTL 2; PORT_STATUS ADD 0, DELETE 1,
	 * MODIFY 2; FLOW_REMOVED IDLE 0, HARD 1, DELETE 2, GROUP_DELETE 3 */
	*as = (struct sw_async){.mask = {
		[SW_ASYNC_PACKET_IN] = {0x3, 0},
		[SW_ASYNC_PORT_STATUS] = {0x7, 0x7},
		[SW_ASYNC_FLOW_REMOVED] = {0xf, 0},
	}};
}

bool sw_async_wants(const struct sw_async *as, uint32_t role, unsigned kind, uint8_t reason)
{
	if (kind > SW_ASYNC_FLOW_REMOVED || reason >= 32)
		return false;
	return as->mask[kind][role == OFPCR_ROLE_SLAVE] >> reason & 1;
}

int sw_role_request(struct sw_roles *r, uint32_t *roles, unsigned n, unsigned who,
		    uint32_t role, uint64_t gen, uint32_t *role_out, uint64_t *gen_out)
{
	if (role > OFPCR_ROLE_SLAVE || who >= n)
		return OFPRRFC_BAD_ROLE;
	if (role == OFPCR_ROLE_MASTER || role == OFPCR_ROLE_SLAVE) {
		if (r->have_gen && of_generation_stale(r->gen, gen))
			return OFPRRFC_STALE;
		r->have_gen = true;
		r->gen = gen;
	}
	if (role == OFPCR_ROLE_MASTER)
		for (unsigned i = 0; i < n; i++)
			if (i != who && roles[i] == OFPCR_ROLE_MASTER)
				roles[i] = OFPCR_ROLE_SLAVE;
	if (role != OFPCR_ROLE_NOCHANGE)
		roles[who] = role;
	*role_out = roles[who];
	*gen_out = r->have_gen ? r->gen : 0;
	return -1;
}
