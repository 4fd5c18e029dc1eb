/*
 * runtime/log.c: the log hook (log.h). Lines are formatted into a stack buffer and handed to
 * the hook, or to the default sink: one write(2) to stderr per line, at most RF_LOG_BURST
 * lines in each wall-clock second. The rate limit is two atomics (the current second and the
 * lines written in it), so logging never takes a lock; the hook and its argument are one
 * pointer to an immutable pair, swapped atomically, so a line never sees a hook with the
 * wrong argument.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/log.h>

struct hook {
	rf_log_fn fn;
	void *arg;
	struct hook *older; /* kept reachable, never freed */
};

static _Atomic int level = RF_LOG_INFO;
static _Atomic(struct hook *) cur_hook;
static _Atomic uint64_t win_sec, win_lines, suppressed, suppressed_told;

static struct hook *all_hooks; /* every hook ever set, under the set lock */
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;

/* Hooks are never freed (a logging thread may still hold the old one): 24 B per set. */
void rf_log_set_hook(rf_log_fn fn, void *arg)
{
	struct hook *h = NULL;
	pthread_mutex_lock(&set_lock);
	if (fn) {
		h = malloc(sizeof(*h));
		if (!h) {
			pthread_mutex_unlock(&set_lock);
			return;
		}
		h->fn = fn;
		h->arg = arg;
		h->older = all_hooks;
		all_hooks = h;
	}
	/* Release: the hook's fields are written before the pointer is seen (pairs with the
	 * acquire load in rf_vlog). */
	atomic_store_explicit(&cur_hook, h, memory_order_release);
	pthread_mutex_unlock(&set_lock);
}

enum rf_log_level rf_log_set_level(enum rf_log_level lvl)
{
	if ((int)lvl < RF_LOG_ERR)
		lvl = RF_LOG_ERR;
	if (lvl > RF_LOG_DEBUG)
		lvl = RF_LOG_DEBUG;
	/* Relaxed: the level guards no data. */
	return (enum rf_log_level)atomic_exchange_explicit(&level, (int)lvl, memory_order_relaxed);
}

enum rf_log_level rf_log_get_level(void)
{
	return (enum rf_log_level)atomic_load_explicit(&level, memory_order_relaxed);
}

static const char *const names[] = {"err", "warn", "info", "debug"};

int rf_log_level_parse(const char *s)
{
	if (!s)
		return -EINVAL;
	for (int i = 0; i < 4; i++)
		if (strcasecmp(s, names[i]) == 0)
			return i;
	if (strcasecmp(s, "error") == 0)
		return RF_LOG_ERR;
	if (strcasecmp(s, "warning") == 0)
		return RF_LOG_WARN;
	if (s[0] >= '0' && s[0] <= '3' && s[1] == '\0')
		return s[0] - '0';
	return -EINVAL;
}

const char *rf_log_level_name(int lvl)
{
	return lvl >= 0 && lvl < 4 ? names[lvl] : "?";
}

uint64_t rf_log_suppressed(void)
{
	return atomic_load_explicit(&suppressed, memory_order_relaxed);
}

/* True when the default sink may write a line now. Relaxed throughout: a limit, not data. */
static int rate_ok(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	uint64_t sec = (uint64_t)ts.tv_sec;
	uint64_t w = atomic_load_explicit(&win_sec, memory_order_relaxed);
	if (w != sec && atomic_compare_exchange_strong_explicit(&win_sec, &w, sec,
								memory_order_relaxed,
								memory_order_relaxed))
		atomic_store_explicit(&win_lines, 0, memory_order_relaxed);
	if (atomic_fetch_add_explicit(&win_lines, 1, memory_order_relaxed) < RF_LOG_BURST)
		return 1;
	atomic_fetch_add_explicit(&suppressed, 1, memory_order_relaxed);
	return 0;
}

static void default_sink(const char *line)
{
	if (!rate_ok())
		return;
	char buf[1280];
	uint64_t s = atomic_load_explicit(&suppressed, memory_order_relaxed);
	uint64_t told = atomic_exchange_explicit(&suppressed_told, s, memory_order_relaxed);
	int n;
	if (s > told)
		n = snprintf(buf, sizeof(buf), "ringflow: %s (%llu earlier lines suppressed)\n",
			     line, (unsigned long long)(s - told));
	else
		n = snprintf(buf, sizeof(buf), "ringflow: %s\n", line);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1, buf[n - 1] = '\n';
	ssize_t w = write(STDERR_FILENO, buf, (size_t)n); /* one write: lines do not interleave */
	(void)w; /* nowhere to report a failed log write */
}

void rf_vlog(enum rf_log_level lvl, const char *fmt, va_list ap)
{
	if ((int)lvl > atomic_load_explicit(&level, memory_order_relaxed))
		return;
	char line[1024];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return;
	size_t l = strlen(line);
	while (l && (line[l - 1] == '\n' || line[l - 1] == '\r'))
		line[--l] = '\0';
	/* Acquire: pairs with the release store in rf_log_set_hook. */
	struct hook *h = atomic_load_explicit(&cur_hook, memory_order_acquire);
	if (h)
		h->fn(lvl, line, h->arg);
	else
		default_sink(line);
}

void rf_log(enum rf_log_level lvl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rf_vlog(lvl, fmt, ap);
	va_end(ap);
}
