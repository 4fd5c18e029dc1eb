/*
 * apps/ctl/ctl_client.c: finding ringflow processes (APP.PID.sock in the socket directory,
 * the PID alive) and the request/answer exchange, every read bounded by a 5 s timeout.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <ringflow/ctl.h>

#include "ctl_client.h"

#define ANSWER_MAX (64u << 20)

/* Whether a process listens on the socket file at path (a stale file refuses connections). */
static bool live(const char *path)
{
	char err[256];
	int fd = ctl_connect(path, err, sizeof(err));
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static int scan(const char *dir, struct ctl_proc *out, int n, int max)
{
	DIR *d = opendir(dir);
	if (!d)
		return n;
	struct dirent *e;
	while (n < max && (e = readdir(d))) {
		char app[32];
		int pid;
		size_t l = strlen(e->d_name);
		if (l < 7 || strcmp(e->d_name + l - 5, ".sock") != 0)
			continue;
		const char *dot = memrchr(e->d_name, '.', l - 5);
		if (!dot || (size_t)(dot - e->d_name) >= sizeof(app))
			continue;
		if (sscanf(dot + 1, "%d", &pid) != 1 || pid <= 0)
			continue;
		if (kill(pid, 0) != 0 && errno == ESRCH)
			continue; /* a stale socket of a dead process */
		if (strlen(dir) + 1 + l >= sizeof(out[n].path))
			continue; /* too long for a socket address anyway */
		/* Two files with one PID: a dead process's stale file and the live process that
		 * was given its PID later. Keep the one that answers a connection. */
		int slot = n;
		for (int i = 0; i < n; i++)
			if (out[i].pid == pid)
				slot = i;
		if (slot < n && live(out[slot].path))
			continue;
		memcpy(app, e->d_name, (size_t)(dot - e->d_name));
		app[dot - e->d_name] = '\0';
		out[slot].pid = pid;
		snprintf(out[slot].app, sizeof(out[slot].app), "%s", app);
		memcpy(out[slot].path, dir, strlen(dir));
		out[slot].path[strlen(dir)] = '/';
		memcpy(out[slot].path + strlen(dir) + 1, e->d_name, l + 1);
		n += slot == n;
	}
	closedir(d);
	return n;
}

/* Only the directory this process would use itself (ctl.h): the same user and environment
 * see the same processes; -s SOCKET reaches any other. */
int ctl_find(struct ctl_proc *out, int max)
{
	char dir[128];
	rf_ctl_dir(dir, sizeof(dir));
	return scan(dir, out, 0, max);
}

int ctl_connect(const char *path, char *err, size_t len)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, len, "socket path too long: %s", path);
		return -1;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		int e = errno;
		if (fd >= 0 && e == ECONNREFUSED) /* the file is there, nobody listens on it */
			snprintf(err, len, "%s: process exited (nobody listens on its control socket; "
				 "the file is left over: remove it)", path);
		else if (fd >= 0 && e == ENOENT)
			snprintf(err, len, "%s: no such socket: the process exited or never ran "
				 "(ringflow-ctl list shows those running)", path);
		else
			snprintf(err, len, "cannot connect to %s: %s (is the process running? "
				 "ringflow-ctl list)", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One line from fd into a growing buffer (pending bytes kept between calls). */
static char *read_line(int fd, char *err, size_t len)
{
	static char *buf;
	static size_t have, cap;
	for (;;) {
		char *nl = have ? memchr(buf, '\n', have) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - buf);
			char *line = malloc(n + 1);
			if (!line) {
				snprintf(err, len, "out of memory");
				return NULL;
			}
			memcpy(line, buf, n);
			line[n] = '\0';
			memmove(buf, nl + 1, have - n - 1);
			have -= n + 1;
			return line;
		}
		if (have + 65536 > cap) {
			if (cap >= ANSWER_MAX) {
				snprintf(err, len, "answer longer than %u bytes", ANSWER_MAX);
				return NULL;
			}
			size_t nc = cap ? cap * 2 : 131072;
			char *nb = realloc(buf, nc);
			if (!nb) {
				snprintf(err, len, "out of memory");
				return NULL;
			}
			buf = nb;
			cap = nc;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 5000) <= 0) {
			snprintf(err, len, "no answer within 5 s");
			return NULL;
		}
		ssize_t r = read(fd, buf + have, cap - have);
		if (r == 0 || (r < 0 && errno == ECONNRESET)) {
			snprintf(err, len, "process exited (it closed the control connection%s)",
				 have ? " mid-answer" : "");
			return NULL;
		}
		if (r < 0) {
			snprintf(err, len, "cannot read the answer: %s", strerror(errno));
			return NULL;
		}
		have += (size_t)r;
	}
}

struct rf_json *ctl_ask(int fd, const char *req, char *err, size_t len)
{
	size_t n = strlen(req);
	char *line = malloc(n + 2);
	if (!line) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	memcpy(line, req, n);
	line[n] = '\n';
	ssize_t w = send(fd, line, n + 1, MSG_NOSIGNAL);
	free(line);
	if (w < 0 && (errno == EPIPE || errno == ECONNRESET)) {
		snprintf(err, len, "process exited (it closed the control connection)");
		return NULL;
	}
	if (w != (ssize_t)(n + 1)) {
		snprintf(err, len, "cannot send the request: %s", strerror(errno));
		return NULL;
	}
	return ctl_read(fd, err, len);
}

struct rf_json *ctl_read(int fd, char *err, size_t len)
{
	char *ans = read_line(fd, err, len);
	if (!ans)
		return NULL;
	struct rf_json *j = rf_json_parse(ans, strlen(ans), err, len);
	free(ans);
	return j;
}
