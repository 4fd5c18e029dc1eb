/*
 * hash/qsbr.c: the QSBR wrappers of ringflow/qsbr.h over liburcu-qsbr, a registry of the
 * registered threads (names, a quiescent-state counter each) and rf_qsbr_defer's bound.
 *
 * The bound: every deferred object counts as pending until its callback ran. At the limit a
 * defer fails with -EAGAIN instead of memory growing, and one line names the registered
 * threads that hold the grace period: those online whose counter has not moved since the
 * pending count passed half the limit (a snapshot taken then). One line per stall: the
 * report re-arms once the pending count falls back under half the limit.
 *
 * Under ThreadSanitizer every quiescent point, offline transition and retire does a TSan
 * "release" on one token, and every reclamation (after a grace period) an "acquire": that is
 * exactly the happens-before edge a grace period provides, which TSan cannot see through
 * liburcu's uninstrumented futexes and inline-asm atomics.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ringflow/log.h>
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

/* One registered thread. Only its thread writes qs and online (relaxed load + store: a
 * statistic read by the stall report); the list and the snapshot are under reg_lock. */
struct rf_qsbr_thread {
	char name[RF_QSBR_NAMESIZE];
	long tid;
	_Atomic uint64_t qs;  /* quiescent states and offline periods passed */
	_Atomic int online;
	uint64_t snap_qs;     /* qs when pending passed half the limit (reg_lock) */
	int snap_valid;       /* reg_lock */
	struct rf_qsbr_thread *next;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rf_qsbr_thread *reg_head;
static _Thread_local struct rf_qsbr_thread *self;

static _Atomic size_t defer_limit = RF_QSBR_DEFER_LIMIT;
static _Atomic size_t defer_pending;
static _Atomic int stall_reported; /* 1 from the report until pending < limit / 2 */
static _Atomic uint64_t stall_reports;

static void self_bump(void)
{
	if (self) /* relaxed: only this thread writes it; readers want a changed value, no order */
		atomic_store_explicit(&self->qs,
				      atomic_load_explicit(&self->qs, memory_order_relaxed) + 1,
				      memory_order_relaxed);
}

static void self_online(int on)
{
	if (self) /* relaxed: a statistic for the stall report */
		atomic_store_explicit(&self->online, on, memory_order_relaxed);
}

void rf_qsbr_register_named(const char *name)
{
	rcu_register_thread();
	struct rf_qsbr_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return; /* registered with liburcu all the same; only left out of reports */
	if (name && *name)
		snprintf(t->name, sizeof(t->name), "%s", name);
	else if (pthread_getname_np(pthread_self(), t->name, sizeof(t->name)) != 0)
		snprintf(t->name, sizeof(t->name), "?");
	t->tid = (long)syscall(SYS_gettid);
	atomic_init(&t->qs, 0);
	atomic_init(&t->online, 1);
	pthread_mutex_lock(&reg_lock);
	t->next = reg_head;
	reg_head = t;
	pthread_mutex_unlock(&reg_lock);
	self = t;
}

void rf_qsbr_register(void)
{
	rf_qsbr_register_named(NULL);
}

void rf_qsbr_unregister(void)
{
	TSAN_RELEASE();
	rcu_unregister_thread();
	struct rf_qsbr_thread *t = self;
	if (!t)
		return;
	pthread_mutex_lock(&reg_lock);
	for (struct rf_qsbr_thread **pp = &reg_head; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	self = NULL;
	free(t);
}

void rf_qsbr_quiescent(void)
{
	TSAN_RELEASE();
	rcu_quiescent_state();
	self_bump();
}

void rf_qsbr_offline(void)
{
	TSAN_RELEASE();
	rcu_thread_offline();
	self_bump();
	self_online(0);
}

void rf_qsbr_online(void)
{
	rcu_thread_online();
	self_online(1);
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

/* ---- the bound on deferred objects, and the stall report ---- */

static void snapshot_threads(void)
{
	pthread_mutex_lock(&reg_lock);
	for (struct rf_qsbr_thread *t = reg_head; t; t = t->next) {
		t->snap_qs = atomic_load_explicit(&t->qs, memory_order_relaxed); /* statistic */
		t->snap_valid = 1;
	}
	pthread_mutex_unlock(&reg_lock);
}

static void report_stall(size_t pending, size_t limit)
{
	int no = 0;
	/* relaxed: one report per stall; the exchange alone decides who writes it. */
	if (!atomic_compare_exchange_strong_explicit(&stall_reported, &no, 1,
						     memory_order_relaxed, memory_order_relaxed))
		return;
	char who[256] = "";
	size_t len = 0;
	unsigned n = 0;
	pthread_mutex_lock(&reg_lock);
	for (struct rf_qsbr_thread *t = reg_head; t; t = t->next) {
		/* relaxed: statistics of other threads; a stale value only delays a name */
		if (!t->snap_valid || !atomic_load_explicit(&t->online, memory_order_relaxed) ||
		    atomic_load_explicit(&t->qs, memory_order_relaxed) != t->snap_qs)
			continue;
		if (len < sizeof(who))
			len += (size_t)snprintf(who + len, sizeof(who) - len, "%s'%s' (tid %ld)",
						n ? ", " : "", t->name, t->tid);
		n++;
	}
	pthread_mutex_unlock(&reg_lock);
	atomic_fetch_add_explicit(&stall_reports, 1, memory_order_relaxed); /* a counter */
	if (n)
		rf_log(RF_LOG_ERR, "qsbr: grace period stalled: %zu deferred objects wait (limit %zu); "
		       "held by registered thread%s %s, online without a quiescent state since they "
		       "piled up; writers get -EAGAIN until %s passes one or goes offline",
		       pending, limit, n > 1 ? "s" : "", who, n > 1 ? "each" : "it");
	else
		rf_log(RF_LOG_ERR, "qsbr: %zu deferred objects wait (limit %zu) and no registered "
		       "thread holds the grace period (reclamation is behind, or a thread "
		       "registered with liburcu directly holds it); writers get -EAGAIN meanwhile",
		       pending, limit);
}

int rf_qsbr_defer_reserve(void)
{
	size_t limit = atomic_load_explicit(&defer_limit, memory_order_relaxed); /* a setting */
	/* relaxed: a count; the objects themselves are ordered by call_rcu's grace period. */
	size_t pending = atomic_fetch_add_explicit(&defer_pending, 1, memory_order_relaxed);
	if (pending >= limit) {
		atomic_fetch_sub_explicit(&defer_pending, 1, memory_order_relaxed);
		report_stall(pending, limit);
		return -EAGAIN;
	}
	if (pending == limit / 2)
		snapshot_threads();
	else if (pending < limit / 2 &&
		 atomic_load_explicit(&stall_reported, memory_order_relaxed))
		atomic_store_explicit(&stall_reported, 0, memory_order_relaxed); /* re-arm */
	return 0;
}

void rf_qsbr_defer_release(void)
{
	atomic_fetch_sub_explicit(&defer_pending, 1, memory_order_relaxed); /* a count */
}

size_t rf_qsbr_defer_pending(void)
{
	return atomic_load_explicit(&defer_pending, memory_order_relaxed); /* a snapshot */
}

size_t rf_qsbr_set_defer_limit(size_t n)
{
	return atomic_exchange_explicit(&defer_limit, n ? n : RF_QSBR_DEFER_LIMIT,
					memory_order_relaxed); /* a setting; orders nothing */
}

uint64_t rf_qsbr_stall_reports(void)
{
	return atomic_load_explicit(&stall_reports, memory_order_relaxed);
}

struct rf_qsbr_deferred {
	struct rcu_head head;
	void (*fn)(void *);
	void *arg;
};

static void run_deferred(struct rcu_head *h)
{
	struct rf_qsbr_deferred *d = caa_container_of(h, struct rf_qsbr_deferred, head);
	TSAN_ACQUIRE(); /* the grace period orders readers' accesses before fn's */
	d->fn(d->arg);
	free(d);
	rf_qsbr_defer_release();
	TSAN_RELEASE(); /* rf_qsbr_barrier's callers see what fn did */
}

int rf_qsbr_defer(void (*fn)(void *), void *arg)
{
	if (!fn)
		return -EINVAL;
	int rc = rf_qsbr_defer_reserve();
	if (rc)
		return rc;
	struct rf_qsbr_deferred *d = malloc(sizeof(*d));
	if (!d) {
		rf_qsbr_defer_release();
		return -ENOMEM;
	}
	d->fn = fn;
	d->arg = arg;
	TSAN_RELEASE(); /* the caller's unlink happens-before the callback */
	call_rcu(&d->head, run_deferred);
	return 0;
}

void rf_qsbr_assert_reader(const char *call)
{
#ifdef RF_DEBUG_CHECKS
	if (rcu_read_ongoing())
		return;
	char name[RF_QSBR_NAMESIZE] = "?";
	pthread_getname_np(pthread_self(), name, sizeof(name));
	rf_log(RF_LOG_ERR, "%s: called from thread '%s' (tid %ld), which is not a registered, "
	       "online QSBR reader: call rf_qsbr_register() first (and rf_qsbr_online() after "
	       "rf_qsbr_offline())", call ? call : "rf_qsbr_assert_reader", name,
	       (long)syscall(SYS_gettid));
	abort();
#else
	(void)call;
#endif
}
