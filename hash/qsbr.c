/*
 * hash/qsbr.c: the QSBR wrappers of ringflow/qsbr.h over liburcu-qsbr.
 *
 * Under ThreadSanitizer every quiescent point, offline transition and retire does a TSan
 * "release" on one token, and every reclamation (after a grace period) an "acquire": that is
 * exactly the happens-before edge a grace period provides, which TSan cannot see through
 * liburcu's uninstrumented futexes and inline-asm atomics.
 */
#include <ringflow/qsbr.h>

#include <urcu-qsbr.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RF_QSBR_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define RF_QSBR_TSAN 1
#endif

#ifdef RF_QSBR_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static char tsan_grace_token;
#define TSAN_RELEASE() __tsan_release(&tsan_grace_token)
/* liburcu's rcu_barrier() hands a calloc'ed block to the call_rcu thread, which frees it,
 * synchronised by liburcu's own uninstrumented atomics: a false race we cannot annotate from
 * outside. Only that frame is suppressed; races in our callbacks stay reported. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
	return "race:urcu_qsbr_barrier\n";
}
#define TSAN_ACQUIRE() __tsan_acquire(&tsan_grace_token)
#else
#define TSAN_RELEASE() ((void)0)
#define TSAN_ACQUIRE() ((void)0)
#endif

void rf_qsbr_register(void)
{
	rcu_register_thread();
}

void rf_qsbr_unregister(void)
{
	TSAN_RELEASE();
	rcu_unregister_thread();
}

void rf_qsbr_quiescent(void)
{
	TSAN_RELEASE();
	rcu_quiescent_state();
}

void rf_qsbr_offline(void)
{
	TSAN_RELEASE();
	rcu_thread_offline();
}

void rf_qsbr_online(void)
{
	rcu_thread_online();
}

bool rf_qsbr_online_now(void)
{
	return rcu_read_ongoing();
}

void rf_qsbr_synchronize(void)
{
	TSAN_RELEASE();
	synchronize_rcu(); /* liburcu-qsbr puts an online caller offline while it waits */
	TSAN_ACQUIRE();
}

void rf_qsbr_barrier(void)
{
	bool online = rcu_read_ongoing();
	if (online)
		rcu_thread_offline();
	rcu_barrier();
	TSAN_ACQUIRE();
	if (online)
		rcu_thread_online();
}

void rf_qsbr_reclaim_begin(void)
{
	TSAN_ACQUIRE();
}

void rf_qsbr_retire_note(void)
{
	TSAN_RELEASE();
}
