/*
 * apps/openflow/controller/cl_cluster.h: ringflow-controller as a member of a cluster on
 * etcd (--cluster, docs/cluster.md). A thread of its own keeps the member's lease, its
 * registration and the mastership keys, and writes each switch's decided role into the
 * role table (cl_roles.h) that the I/O poller reads; nothing on the PACKET_IN path waits on
 * it. Built only with libcurl (RF_WITH_CURL).
 *
 * Keys under the prefix (default /ringflow):
 *   PREFIX/members/NODE         {"node":..,"rest":..,"dpids":["hex16",...]} under the lease
 *   PREFIX/masters/DPID(hex16)  NODE, created if absent under the master's lease; its
 *                               create_revision is the generation id sent in ROLE_REQUEST
 *   PREFIX/lldp-key             the LLDP tag's secret, base64 (no lease: it stays)
 *   PREFIX/state/DPID(hex16)    what the switch's master knows of it, under its lease:
 *                               {"hosts":[["MAC12HEX",port,ipv4],...],
 *                                "links":[["SRC_DPID",src_port,dst_port],...],
 *                                "macs":[["MAC12HEX",port],...]}
 * Errors: cl_cluster_start returns NULL with one line in err.
 */
#ifndef RINGFLOW_CL_CLUSTER_H
#define RINGFLOW_CL_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cl_roles;
struct ofc_net;

struct cl_config {
	const char *urls;   /* the part after "etcd=" */
	const char *node;   /* --node-id */
	const char *prefix; /* --cluster-prefix */
	unsigned ttl_s;     /* --lease-ttl (2..60) */
	bool wait;          /* --cluster-wait: wait for etcd at start instead of failing */
	const char *rest;   /* this member's REST address, shown to the others (may be NULL) */
	struct ofc_net *net; /* the apps' network view: published and merged (NULL: none) */
	struct rf_hash *macs; /* the learning switch's MAC table: published per switch, and
			       * seeded into a new master's handler (NULL: not shared) */
	uint8_t *lldp_key;  /* 16 bytes: replaced at start by the cluster's shared LLDP secret
			     * (PREFIX/lldp-key, created from this one if absent), so a link
			     * probed by one member's LLDP is accepted by the member that receives
			     * it; NULL: not shared */
};

struct cl_cluster;

/* Reaches etcd, takes a lease, registers and starts the thread. Unreachable etcd: NULL and
 * one line in err, unless cfg->wait (then it retries every second, saying so once; SIGINT
 * and SIGTERM still end the process, their handlers are installed later). */
struct cl_cluster *cl_cluster_start(const struct cl_config *cfg, struct cl_roles *roles,
				    char *err, size_t errlen);
/* Stops the thread, gives the masterships up (revokes the lease) and frees. NULL: no-op. */
void cl_cluster_stop(struct cl_cluster *c);
/* The /api/cluster JSON (members, health, masters, this member's switches) into out: 200.
 * Any thread. */
int cl_cluster_render(void *c, FILE *out);
/* The hosts (table 0: OFC_HOST_KEY-byte keys as ofc_app.h lays them out) or links (table 1:
 * 24-byte link keys) the switches' masters published, as a malloc'd array of n keys of
 * 32 bytes each (zero-padded), into *keys; the caller frees it. Any thread. */
size_t cl_cluster_shared(void *c, int table, uint8_t (**keys)[32]);
/* "node" names are 1..63 of [A-Za-z0-9._-]. */
bool cl_node_name_ok(const char *s);

#endif /* RINGFLOW_CL_CLUSTER_H */
