/*
 * tests/shim/shim_main.c: the runner behind criterion_shim.h. Every registered test runs in
 * its own forked child (a failed assertion or a sanitizer report ends only that child); the
 * parent prints one line per test and the summary.
 */
#include "criterion_shim.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define SKIP_EXIT 77

static struct rf_shim_test *tests, **tail = &tests;

void rf_shim_register(struct rf_shim_test *t)
{
	*tail = t;
	tail = &t->next;
}

void rf_shim_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
	fprintf(stderr, "[----] %s:%d: Assertion failed: %s", file, line, expr);
	if (fmt && fmt[0]) {
		va_list ap;
		va_start(ap, fmt);
		fprintf(stderr, ": ");
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fprintf(stderr, "\n");
	fflush(stderr);
	_exit(1);
}

void rf_shim_skip(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "[SKIP] ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	fflush(stderr);
	_exit(SKIP_EXIT);
}

void rf_shim_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "[----] ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "--filter=", 9) == 0)
			only = argv[i] + 9;
	unsigned passed = 0, failed = 0, skipped = 0;
	for (struct rf_shim_test *t = tests; t; t = t->next) {
		char full[256];
		snprintf(full, sizeof(full), "%s::%s", t->suite, t->name);
		if (only && !strstr(full, only))
			continue;
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			t->fn();
			fflush(NULL);
			_exit(0);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("[PASS] %s\n", full);
			passed++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == SKIP_EXIT) {
			printf("[SKIP] %s\n", full);
			skipped++;
		} else {
			printf("[FAIL] %s (%s %d)\n", full, WIFSIGNALED(status) ? "signal" : "exit",
			       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			failed++;
		}
		fflush(stdout);
	}
	printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
