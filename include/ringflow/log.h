/*
 * ringflow/log.h: the library's one way to say something: a log hook with levels.
 *
 * The one idea: library code never writes to stderr itself; it calls rf_log, and the app
 * decides where lines go (rf_log_set_hook). Without a hook, a line goes to stderr as
 * "ringflow: <message>", rate-limited to RF_LOG_BURST lines a second (the lines dropped are
 * counted and announced with the next line that passes), so a flood of warnings cannot stall
 * a thread on a slow terminal. The level can change at any time from any thread (the
 * control socket's "log-level" command does), and a line above the level costs one relaxed
 * load.
 *
 * Thread-safety: every function may be called from any thread at any time. The hook runs on
 * the thread that logs (possibly a poller), so it must not block for long.
 */
#ifndef RINGFLOW_LOG_H
#define RINGFLOW_LOG_H

#include <stdarg.h>
#include <stdint.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

enum rf_log_level {
	RF_LOG_ERR = 0,   /* something failed */
	RF_LOG_WARN = 1,  /* works, but not as asked (e.g. no hugepages: normal pages) */
	RF_LOG_INFO = 2,  /* what was set up (e.g. the XDP mode a device runs in); the default */
	RF_LOG_DEBUG = 3, /* chatter */
};

#define RF_LOG_BURST 20 /* default sink: lines per second before it drops */

/* A hook: one line (no trailing newline) at level lvl. arg is what rf_log_set_hook got. */
typedef void (*rf_log_fn)(enum rf_log_level lvl, const char *line, void *arg);

/* Send lines to fn(arg) from now on; NULL restores the default (stderr, rate-limited). */
void rf_log_set_hook(rf_log_fn fn, void *arg);

/* Lines above lvl are dropped before formatting. Returns the previous level. */
enum rf_log_level rf_log_set_level(enum rf_log_level lvl);
enum rf_log_level rf_log_get_level(void);

/* "err", "warn", "info", "debug" (also "error", "warning", or 0..3) to a level, or -EINVAL. */
int rf_log_level_parse(const char *s);
/* The level's name ("warn"); "?" for a bad value. */
const char *rf_log_level_name(int lvl);

/* Log one line (printf format; a trailing newline is dropped). */
void rf_log(enum rf_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rf_vlog(enum rf_log_level lvl, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Lines the default sink dropped for the rate limit, since the process started. */
uint64_t rf_log_suppressed(void);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_LOG_H */
