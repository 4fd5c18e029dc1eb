/*
 * bench/kernels/perf_counter.c: perf_event_open(2) for one user-space hardware counter.
 * glibc has no wrapper for the call, hence syscall().
 */
#include "perf_counter.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int perf_counter_open_branch_misses(void)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_BRANCH_MISSES;
	attr.disabled = 1;
	attr.exclude_kernel = 1; /* allowed at perf_event_paranoid 2 */
	attr.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any CPU */,
			  -1 /* no group */, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

void perf_counter_start(int fd)
{
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

void perf_counter_stop(int fd)
{
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

int64_t perf_counter_read(int fd)
{
	uint64_t v;
	return read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? (int64_t)v : -1;
}

void perf_counter_close(int fd)
{
	close(fd);
}

const char *perf_counter_why(int err)
{
	static char buf[160];
	const char *hint = "";
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		hint = " (no hardware counters exposed, e.g. a VM without a virtual PMU)";
	else if (err == EACCES || err == EPERM)
		hint = " (lower /proc/sys/kernel/perf_event_paranoid or run as root)";
	else if (err == ENOSYS)
		hint = " (kernel built without perf events)";
	snprintf(buf, sizeof(buf), "perf_event_open: %s%s", strerror(err), hint);
	return buf;
}
