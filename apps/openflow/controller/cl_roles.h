/*
 * apps/openflow/controller/cl_roles.h: the one place where the cluster thread (cl_cluster.c)
 * and the I/O poller (ofc_io.c) meet: a fixed table of switches, one slot per datapath id,
 * each a few atomic words. No lock, no queue: the I/O poller never waits on the cluster.
 *
 * Contract, per slot:
 *   dpid, up, have, refused   written by the I/O poller only (a slot is claimed for a dpid
 *                             once and keeps it for the process's life: CL_ROLE_SLOTS
 *                             distinct switches at most; more are left EQUAL and counted)
 *   want                      written by the cluster thread only: generation << 2 | role
 *                             (CL_ROLE_*; 0: no decision yet, the switch stays EQUAL)
 * The I/O poller sends a ROLE_REQUEST whenever a connection's last sent word differs from
 * want (so a reconnecting switch gets the current decision at once), and records the
 * switch's ROLE_REPLY in have. The apps' timer (LLDP) runs only for switches where this
 * member is master (or no decision exists: a single controller behaves as before).
 */
#ifndef RINGFLOW_CL_ROLES_H
#define RINGFLOW_CL_ROLES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ofc.h"

#define CL_ROLE_SLOTS OFC_MAX_CONNS
#define CL_ROLE_MASTER 2u /* = OFPCR_ROLE_MASTER */
#define CL_ROLE_SLAVE 3u  /* = OFPCR_ROLE_SLAVE */

struct cl_role_slot {
	_Atomic uint64_t dpid; /* 0: free */
	_Atomic uint32_t up;   /* an OpenFlow 1.3 connection to it is up */
	_Atomic uint64_t want; /* cluster: generation << 2 | role */
	_Atomic uint64_t have; /* I/O: the switch's last ROLE_REPLY, same encoding */
	_Atomic uint64_t refused; /* I/O: ROLE_REQUEST_FAILED errors (stale generation) */
	_Atomic uint64_t sent;    /* I/O: ROLE_REQUESTs sent */
} __attribute__((aligned(64)));

struct cl_roles {
	struct cl_role_slot s[CL_ROLE_SLOTS];
	_Atomic uint64_t epoch;    /* cluster: bumped after any want changes */
	/* cluster: the lease's safe end, monotonic ms (ofc_now_ms); past it the I/O poller
	 * treats every MASTER decision as SLAVE on its own (fencing that holds even if the
	 * cluster thread is stuck in a call). UINT64_MAX: no deadline (no cluster, or etcd
	 * without quorum: no one can be elected, see docs/cluster.md). */
	_Atomic uint64_t fence_at_ms;
	/* I/O: when it last sent a SLAVE request because of the deadline, and that deadline
	 * (so /api/cluster can show how late after the deadline the demotion went out) */
	_Atomic uint64_t fenced_ms, fenced_deadline_ms;
	/* cluster -> I/O poller (single producer, single consumer): struct cl_seed *, malloc'd
	 * by the cluster thread, freed by the I/O poller after handing the records over */
	struct rf_ring *seeds;
	_Atomic uint64_t seeds_dropped; /* cluster: the ring was full */
	_Atomic uint64_t no_slot;  /* I/O: switches beyond CL_ROLE_SLOTS (left EQUAL) */
};

/* MACs the cluster knew for a switch whose master this member just became. */
struct cl_seed {
	uint64_t dpid;
	uint32_t n;              /* records */
	uint8_t rec[][OFC_SEED_REC]; /* MAC(6) port(4, big-endian) */
};

static inline uint64_t cl_role_word(uint64_t gen, uint32_t role)
{
	return gen << 2 | role;
}

/* I/O poller: the slot of dpid, claimed if new; NULL when the table is full. */
static inline struct cl_role_slot *cl_roles_slot(struct cl_roles *r, uint64_t dpid)
{
	for (unsigned i = 0; i < CL_ROLE_SLOTS; i++) {
		/* Relaxed: the I/O poller is the only writer of dpid. */
		uint64_t d = atomic_load_explicit(&r->s[i].dpid, memory_order_relaxed);
		if (d == dpid)
			return &r->s[i];
		if (d == 0) {
			/* Release: pairs with the cluster thread's acquire load of dpid, so it
			 * sees the slot's other fields as initialised (zero) before the dpid. */
			atomic_store_explicit(&r->s[i].dpid, dpid, memory_order_release);
			return &r->s[i];
		}
	}
	atomic_fetch_add_explicit(&r->no_slot, 1, memory_order_relaxed);
	return NULL;
}

/* I/O poller: the role word to act on at now_ms: want, with MASTER turned into SLAVE past
 * the fencing deadline. */
static inline uint64_t cl_roles_effective(struct cl_roles *r, uint64_t want, uint64_t now_ms)
{
	/* Relaxed: a deadline read late by a round is still a full margin before the lease
	 * can expire on etcd's side (docs/cluster.md). */
	if ((want & 3u) == CL_ROLE_MASTER &&
	    now_ms >= atomic_load_explicit(&r->fence_at_ms, memory_order_relaxed))
		return (want & ~(uint64_t)3) | CL_ROLE_SLAVE;
	return want;
}

/* I/O poller: true when the apps' timer may act on dpid (we are master, or undecided). */
static inline bool cl_roles_may_act(struct cl_roles *r, uint64_t dpid, uint64_t now_ms)
{
	if (!r)
		return true;
	for (unsigned i = 0; i < CL_ROLE_SLOTS; i++) {
		uint64_t d = atomic_load_explicit(&r->s[i].dpid, memory_order_relaxed);
		if (d == dpid) {
			/* Acquire: pairs with the cluster thread's release store of want. */
			uint64_t w = atomic_load_explicit(&r->s[i].want, memory_order_acquire);
			return (cl_roles_effective(r, w, now_ms) & 3u) != CL_ROLE_SLAVE;
		}
		if (d == 0)
			break;
	}
	return true;
}

#endif /* RINGFLOW_CL_ROLES_H */
