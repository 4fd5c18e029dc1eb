/*
 * apps/openflow/controller/ofc_hosts.c: host tracking (see ofc_app.h). A PACKET_IN's unicast
 * source MAC, seen on (dpid, in_port) that is not an end of an inter-switch link, is a host
 * attached there; its IPv4 address comes from an ARP sender address or an IPv4 source.
 * Entries are keyed by (MAC, dpid, port, IPv4) with the last-seen time: a host that moves or
 * changes address gets a new entry and the old one ages out (OFC_HOST_AGE_MS); readers take
 * the newest entry per MAC. An entry is refreshed at most once a second (few writes).
 * Each switch's entries count against its quota and age out in the handler that serves it
 * (ofc_quota.c), which also deletes them, in bounded steps, when the switch leaves; entries on
 * a port that became an inter-switch link end go at the next aging visit.
 */
#include <string.h>

#include "ofc_app.h"


static uint32_t src_ipv4(const struct of_eth *e)
{
	if (e->type == OF_ETH_TYPE_ARP && e->payload_len >= 28)
		return of_get32(e->payload + 14); /* sender protocol address */
	if (e->type == OF_ETH_TYPE_IPV4 && e->payload_len >= 20)
		return of_get32(e->payload + 12);
	return 0;
}

static void hosts_packet_in(const struct ofc_app *a, struct ofc_pkt *pk)
{
	struct ofc_net *net = a->arg;
	const struct of_packet_in *pi = &pk->m->u.packet_in;
	const struct of_eth *e = pk->eth;
	if (e->type == OF_ETH_TYPE_LLDP || (e->src[0] & 1) || !(pi->match.fields & OF_MATCH_IN_PORT))
		return;
	uint8_t key[OFC_HOST_KEY];
	memcpy(key, e->src, 6);
	ofc_put64(key + 6, pk->dpid);
	ofc_put32(key + 14, pi->match.in_port);
	ofc_put32(key + 18, src_ipv4(e));
	uint64_t seen = (uint64_t)(uintptr_t)rf_hash_lookup(net->hosts, key);
	if (seen && pk->now_ms < seen - 1 + 1000)
		return; /* fresh enough */
	if (!seen && ofc_links_has_end(net, pk->dpid, pi->match.in_port, pk->now_ms))
		return; /* an inter-switch port: the MAC is some other switch's host */
	if (pk->h && pk->h->learn)
		ofc_learn_host(pk->h->learn, pk->dpid, key, pk->now_ms); /* quota, aging */
	else
		rf_hash_upsert(net->hosts, key, (void *)(uintptr_t)(pk->now_ms + 1), NULL);
}

struct ofc_app ofc_hosts_app(struct ofc_net *net)
{
	return (struct ofc_app){.name = "hosts", .arg = net, .on_packet_in = hosts_packet_in};
}
