/*
 * ringflow/qsbr.h: safe memory reclamation for the lock-free list and hash, on liburcu QSBR.
 *
 * The one idea (quiescent-state-based reclamation): a reader holds no lock and writes
 * nothing; instead every registered thread promises to pass a *quiescent state* now and
 * then, a point where it holds no pointer into any shared structure. A node unlinked at
 * time t is reused only after every registered thread has passed a quiescent state after t
 * (a grace period). Pollers get this for free: the runtime calls rf_qsbr_quiescent() once per
 * poll loop, so reads cost nothing at all.
 *
 * The rule for every thread that touches a ringflow hash or list:
 *   1. rf_qsbr_register() once before the first call, rf_qsbr_unregister() before exiting.
 *   2. A registered thread is *online*: it is inside a read-side section all the time, and it
 *      must call rf_qsbr_quiescent() regularly (between operations, never while holding a node
 *      or value pointer it still uses). A thread that forgets stalls every grace period: deleted
 *      nodes pile up and inserts start failing with -ENOSPC.
 *   3. A thread that is not a poller and is about to block (sleep, wait on a socket, a condition
 *      variable, join a thread) goes offline first: rf_qsbr_offline() ... block ... rf_qsbr_online().
 *      Offline it may not touch the structures; it does not delay grace periods either.
 *   4. Values (void *) returned by lookups are the caller's: the hash only reclaims its own
 *      nodes. If the value points at memory you free after a delete, defer that free the same
 *      way (rf_qsbr_synchronize() then free, or liburcu's call_rcu()).
 *
 * These are thin wrappers over liburcu-qsbr (rcu_register_thread, rcu_quiescent_state, ...);
 * calling liburcu directly is equivalent, except under ThreadSanitizer: liburcu is not
 * instrumented, so these wrappers also tell TSan that a grace period orders the readers'
 * accesses before the reclaimer's reuse (without that, TSan reports false races). Tests use
 * the wrappers.
 *
 * Thread-safety: each function acts on the calling thread only.
 */
#ifndef RINGFLOW_QSBR_H
#define RINGFLOW_QSBR_H

#include <stdbool.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

/* Registers the calling thread as a QSBR reader (online). Idempotent per thread is NOT
 * promised: call once. */
void rf_qsbr_register(void);

/* Unregisters the calling thread (it must not hold node pointers). */
void rf_qsbr_unregister(void);

/* Announces a quiescent state: the thread holds no pointer into a lock-free structure. */
void rf_qsbr_quiescent(void);

/* Goes offline (an extended quiescent state, e.g. before blocking) / comes back online. */
void rf_qsbr_offline(void);
void rf_qsbr_online(void);

/* True when the calling thread is registered and online. */
bool rf_qsbr_online_now(void);

/* Waits for a grace period (goes offline meanwhile if online). Blocking: not for pollers. */
void rf_qsbr_synchronize(void);

/* Waits until every reclamation callback queued before the call has run (rcu_barrier).
 * Blocking; goes offline meanwhile if online. */
void rf_qsbr_barrier(void);

/* TSan bookkeeping for a reclamation callback: call at the start of a callback that reuses
 * memory readers may have seen (no-op without TSan). */
void rf_qsbr_reclaim_begin(void);

/* TSan bookkeeping (a release point): before handing a node to call_rcu, and at the end of a
 * reclamation callback that rf_qsbr_barrier() waits for (no-op without TSan). */
void rf_qsbr_retire_note(void);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_QSBR_H */
