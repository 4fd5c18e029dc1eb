/*
 * bench/tools/vethbed.c: create, enter and remove the two-namespace veth bed (vethbed.h).
 */
#include "vethbed.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int rf_run_quiet(const char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -rc;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -ECHILD;
}

/* Runs an `ip` command; any failure becomes -EIO (ip prints nothing we keep). */
#define IP(...)                                                      \
	do {                                                         \
		const char *const argv_[] = {"ip", __VA_ARGS__, NULL}; \
		int rc_ = rf_run_quiet(argv_);                       \
		if (rc_ != 0) {                                      \
			rf_vethbed_destroy(b);                       \
			return rc_ < 0 ? rc_ : -EIO;                 \
		}                                                    \
	} while (0)

int rf_vethbed_create(struct rf_vethbed *b, const char *tag)
{
	memset(b, 0, sizeof(*b));
	for (int s = 0; s < 2; s++) {
		snprintf(b->ns[s], sizeof(b->ns[s]), "rf%.2s%d%c", tag, (int)getpid(), 'a' + s);
		snprintf(b->dev[s], sizeof(b->dev[s]), "%s", b->ns[s]);
		snprintf(b->addr[s], sizeof(b->addr[s]), "10.201.0.%d", s + 1);
	}
	b->home_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (b->home_ns < 0)
		return -errno;
	b->created = true; /* from here on, destroy() cleans up whatever exists */
	IP("netns", "add", b->ns[0]);
	IP("netns", "add", b->ns[1]);
	IP("-n", b->ns[0], "link", "add", b->dev[0], "type", "veth", "peer", "name", b->dev[1],
	   "netns", b->ns[1]);
	for (int s = 0; s < 2; s++) {
		char cidr[24];
		snprintf(cidr, sizeof(cidr), "%s/24", b->addr[s]);
		IP("-n", b->ns[s], "addr", "add", cidr, "dev", b->dev[s]);
		IP("-n", b->ns[s], "link", "set", b->dev[s], "up");
		IP("-n", b->ns[s], "link", "set", "lo", "up");
	}
	return 0;
}

int rf_vethbed_set_rps(const struct rf_vethbed *b, int side, unsigned cpu)
{
	char script[160];
	if (cpu >= 32)
		return -EINVAL; /* one 32-bit word of mask is enough for this tool */
	snprintf(script, sizeof(script), "echo %x > /sys/class/net/%s/queues/rx-0/rps_cpus",
		 1u << cpu, b->dev[side]);
	const char *const argv[] = {"ip", "netns", "exec", b->ns[side], "sh", "-c", script, NULL};
	int rc = rf_run_quiet(argv);
	return rc == 0 ? 0 : rc < 0 ? rc : -EIO;
}

int rf_vethbed_enter(const struct rf_vethbed *b, int side)
{
	if (side < 0)
		return setns(b->home_ns, CLONE_NEWNET) ? -errno : 0;
	char path[64];
	snprintf(path, sizeof(path), "/run/netns/%s", b->ns[side]);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return rc;
}

void rf_vethbed_destroy(struct rf_vethbed *b)
{
	if (!b->created)
		return;
	for (int s = 0; s < 2; s++) {
		const char *const argv[] = {"ip", "netns", "del", b->ns[s], NULL};
		rf_run_quiet(argv);
	}
	close(b->home_ns);
	b->created = false;
}

void rf_vethbed_destroy_in_signal(const struct rf_vethbed *b)
{
	static const char *const ip[] = {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"};
	char *const envp[] = {NULL};
	if (!b->created)
		return;
	for (int s = 0; s < 2; s++) {
		char *const argv[] = {"ip", "netns", "del", (char *)b->ns[s], NULL};
		pid_t pid = fork();
		if (pid == 0) {
			for (unsigned i = 0; i < sizeof(ip) / sizeof(ip[0]); i++)
				execve(ip[i], argv, envp);
			_exit(127);
		}
		if (pid > 0)
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
	}
}
