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
 *      nodes pile up. What waits on rf_qsbr_defer is bounded: at RF_QSBR_DEFER_LIMIT objects
 *      (rf_qsbr_set_defer_limit) a defer fails with -EAGAIN instead of memory growing, and one
 *      line through the log hook names the registered thread(s) holding the grace period. The
 *      hash counts its own deferred frees (epoch advances, key-copy batches, replaced tables) against the
 *      same limit: at it the hash stops replacing tables, and once the table is full of
 *      slots waiting for the grace period, inserts fail with -EAGAIN instead of memory
 *      growing. In debug builds (RF_DEBUG_CHECKS) each hash lookup and write also checks its
 *      thread with rf_qsbr_assert_reader (rule 6).
 *   3. A thread that is not a poller and is about to block (sleep, wait on a socket, a condition
 *      variable, join a thread) goes offline first: rf_qsbr_offline() ... block ... rf_qsbr_online().
 *      Offline it may not touch the structures; it does not delay grace periods either.
 *   4. Values (void *) returned by lookups are the caller's: the hash only reclaims its own
 *      nodes. If the value points at memory you free after a delete, defer that free the same
 *      way: rf_qsbr_defer(free_fn, value) (no liburcu call in the app), or rf_qsbr_synchronize()
 *      then free on a thread that may block.
 *   5. The runtime's service thread (timers, stats callbacks): timers run ONLINE, and it passes
 *      a quiescent state after each timer, so a timer may look up and delete but must not keep
 *      pointers to the next run. It must NEVER block for a grace period (rf_qsbr_synchronize,
 *      rf_qsbr_barrier, rf_hash_free of a table with deletes): it would wait for itself and
 *      every timer would stop. Free what a timer deleted with rf_qsbr_defer; if it fails with
 *      -EAGAIN, keep the object and retry on a later run. Free a hash there with
 *      rf_hash_free_deferred.
 *   6. Debug builds (RF_DEBUG_CHECKS) can check a reader: rf_qsbr_assert_reader(call) aborts
 *      with one line when the calling thread is not registered and online.
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
#include <stddef.h>
#include <stdint.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

#define RF_QSBR_NAMESIZE 32          /* thread names kept for stall reports, with the NUL */
#define RF_QSBR_DEFER_LIMIT (1u << 20) /* default bound on deferred, not yet reclaimed objects */

/* Registers the calling thread as a QSBR reader (online), named by its pthread name.
 * Idempotent per thread is NOT promised: call once. */
void rf_qsbr_register(void);

/* As rf_qsbr_register, under `name` (truncated to RF_QSBR_NAMESIZE - 1; NULL or "": the
 * thread's pthread name): the name stall reports give. */
void rf_qsbr_register_named(const char *name);

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

/* Runs fn(arg) after a grace period, on liburcu's call_rcu thread. Call from a registered
 * thread (online or offline); never blocks. Returns 0, -EINVAL (fn NULL), -ENOMEM, or -EAGAIN
 * when rf_qsbr_defer_pending() is at the limit (a stalled grace period, reported once by one
 * log line naming the holder): nothing is queued, the caller keeps arg and retries later. */
int rf_qsbr_defer(void (*fn)(void *), void *arg);

/* The bound for structures that queue their own call_rcu callbacks (e.g. the hash): reserve
 * one pending object before queuing (0, or -EAGAIN at the limit, reported as above) and
 * release it at the end of the callback. Any thread; never blocks. */
int rf_qsbr_defer_reserve(void);
void rf_qsbr_defer_release(void);

/* Deferred objects whose callback has not run yet (a snapshot). */
size_t rf_qsbr_defer_pending(void);

/* Sets the bound on pending deferred objects (0: RF_QSBR_DEFER_LIMIT); returns the old one.
 * Any thread, any time; lowering it below the pending count fails new defers until they drain. */
size_t rf_qsbr_set_defer_limit(size_t n);

/* Stall reports logged since the process started (one per stall). */
uint64_t rf_qsbr_stall_reports(void);

/* Debug builds (RF_DEBUG_CHECKS): when the calling thread is not a registered, online reader,
 * logs one line naming `call` and the thread, then abort()s. Otherwise does nothing. */
void rf_qsbr_assert_reader(const char *call);

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
