/*
 * apps/openflow/controller/ctl_hosts.c: host tracking (see ctl_app.h). A PACKET_IN's unicast
 * source MAC, seen on (dpid, in_port) that is not an end of an inter-switch link, is a host
 * attached there; its IPv4 address comes from an ARP sender address or an IPv4 source.
 * Entries are keyed by (MAC, dpid, port, IPv4) with the last-seen time: a host that moves or
 * changes address gets a new entry and the old one ages out (CTL_HOST_AGE_MS); readers take
 * the newest entry per MAC. An entry is refreshed at most once a second (few writes).
 */
#include <string.h>

#include "ctl_app.h"

#define KEY_LEN 22
#define BATCH 256

static uint32_t src_ipv4(const struct of_eth *e)
{
	if (e->type == OF_ETH_TYPE_ARP && e->payload_len >= 28)
		return of_get32(e->payload + 14); /* sender protocol address */
	if (e->type == OF_ETH_TYPE_IPV4 && e->payload_len >= 20)
		return of_get32(e->payload + 12);
	return 0;
}

static void hosts_packet_in(const struct ctl_app *a, struct ctl_pkt *pk)
{
	struct ctl_net *net = a->arg;
	const struct of_packet_in *pi = &pk->m->u.packet_in;
	const struct of_eth *e = pk->eth;
	if (e->type == OF_ETH_TYPE_LLDP || (e->src[0] & 1) || !(pi->match.fields & OF_MATCH_IN_PORT))
		return;
	uint8_t key[KEY_LEN];
	memcpy(key, e->src, 6);
	ctl_put64(key + 6, pk->dpid);
	ctl_put32(key + 14, pi->match.in_port);
	ctl_put32(key + 18, src_ipv4(e));
	uint64_t seen = (uint64_t)(uintptr_t)rf_hash_lookup(net->hosts, key);
	if (seen && pk->now_ms < seen - 1 + 1000)
		return; /* fresh enough */
	if (!seen && ctl_links_has_end(net, pk->dpid, pi->match.in_port))
		return; /* an inter-switch port: the MAC is some other switch's host */
	rf_hash_upsert(net->hosts, key, (void *)(uintptr_t)(pk->now_ms + 1), NULL);
}

/* Removes entries that are old, on a port that became a link end, or on switch `gone`. */
static void sweep(struct ctl_net *net, uint64_t now, bool by_switch, uint64_t gone)
{
	uint8_t keys[BATCH][KEY_LEN];
	unsigned n;
	do {
		n = 0;
		struct rf_hash_iter it;
		const void *key;
		void *v;
		rf_hash_iter_init(net->hosts, &it);
		while (n < BATCH && rf_hash_iter_next(net->hosts, &it, &key, &v)) {
			const uint8_t *k = key;
			uint64_t dpid = ctl_get64(k + 6);
			bool drop = by_switch ? dpid == gone
					      : now > (uint64_t)(uintptr_t)v - 1 + CTL_HOST_AGE_MS ||
							ctl_links_has_end(net, dpid, of_get32(k + 14));
			if (drop)
				memcpy(keys[n++], key, KEY_LEN);
		}
		for (unsigned i = 0; i < n; i++)
			rf_hash_delete(net->hosts, keys[i], NULL);
	} while (n == BATCH);
}

static void hosts_timer(const struct ctl_app *a, const struct ctl_switch *sw, uint64_t now,
			struct of_out *out)
{
	(void)out;
	if (!sw)
		sweep(a->arg, now, false, 0);
}

static void hosts_switch_down(const struct ctl_app *a, uint64_t dpid)
{
	sweep(a->arg, 0, true, dpid);
}

struct ctl_app ctl_hosts_app(struct ctl_net *net)
{
	return (struct ctl_app){.name = "hosts", .arg = net, .on_packet_in = hosts_packet_in,
				.on_switch_down = hosts_switch_down, .on_timer = hosts_timer};
}
