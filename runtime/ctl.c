/*
 * runtime/ctl.c: the control thread (ctl.h): one epoll loop over the Unix control socket,
 * the metrics TCP listener, their clients and a stop eventfd.
 *
 * The one idea: every client is non-blocking and owns at most one request buffer
 * (RF_CTL_MAX_REQUEST) and one answer (max_output_len). While an answer is not fully
 * written, the client is not read from, so a client that never reads cannot make the
 * server buffer more; a client that makes no progress for timeout_ms is closed. The loop
 * wakes at least every 100 ms to enforce that.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <ringflow/ctl.h>
#include <ringflow/log.h>
#include <ringflow/qsbr.h>
#include <ringflow/stats.h>

#include "ctl_pvt.h"

struct rf_ctl_client {
	int fd;
	bool http;
	bool closing;        /* close once out is written */
	size_t inlen;
	char in[RF_CTL_MAX_REQUEST + 1];
	struct rf_buf out;
	size_t outoff;
	uint64_t progress_ns; /* last byte moved either way */
};

uint64_t rf_ctl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int rf_ctl_dir(char *buf, size_t len)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	if (x && *x)
		return snprintf(buf, len, "%s/ringflow", x);
	if (geteuid() == 0)
		return snprintf(buf, len, "/run/ringflow");
	return snprintf(buf, len, "/tmp/ringflow-%u", (unsigned)geteuid());
}

static int ctl_err(char *err, size_t len, int e, const char *fmt, const char *a, const char *b)
{
	if (err && len)
		snprintf(err, len, fmt, a, b, strerror(e));
	errno = e;
	return -e;
}

/* Whether a process listens on the Unix socket at a (a stale file refuses the connection). */
static bool unix_live(const struct sockaddr_un *a)
{
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live = probe >= 0 && connect(probe, (const struct sockaddr *)a, sizeof(*a)) == 0;
	if (probe >= 0)
		close(probe);
	return live;
}

/* Remove the stale sockets a dead process with our PID left in dir (APP.PID.sock under another
 * APP name): ringflow-ctl finds processes by PID and would take such a file for us. Files that
 * still answer (a second rf_ctl of this process) are kept. */
static void sweep_own_pid(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	char tail[24];
	int tl = snprintf(tail, sizeof(tail), ".%d.sock", (int)getpid());
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= (size_t)tl || strcmp(e->d_name + l - (size_t)tl, tail) != 0)
			continue;
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		if (snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", dir, e->d_name) >=
		    (int)sizeof(a.sun_path))
			continue;
		if (!unix_live(&a))
			unlink(a.sun_path);
	}
	closedir(d);
}

/* Bind the Unix socket at path, mode 0600. A stale file (nobody listening) is replaced. */
static int open_unix(struct rf_ctl *ctl, char *err, size_t len)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(ctl->path) >= sizeof(a.sun_path))
		return ctl_err(err, len, ENAMETOOLONG, "ctl: socket path %s%s too long (%s)",
			       ctl->path, "");
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", ctl->path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ctl_err(err, len, errno, "ctl: socket%s%s: %s", "", "");
	mode_t old = umask(0077);
	int rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	if (rc && errno == EADDRINUSE) {
		if (!unix_live(&a)) {
			unlink(ctl->path);
			rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
		} else {
			errno = EADDRINUSE;
		}
	}
	umask(old);
	if (rc || chmod(ctl->path, 0600) || listen(fd, 128)) {
		int e = errno;
		close(fd);
		return ctl_err(err, len, e, "ctl: cannot listen on %s%s: %s (is another process "
			       "using it?)", ctl->path, "");
	}
	ctl->lfd = fd;
	return 0;
}

static int open_metrics(struct rf_ctl *ctl, const char *spec, char *err, size_t len)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host))
		return ctl_err(err, len, EINVAL, "ctl: --metrics %s%s: use IP:PORT, e.g. "
			       "127.0.0.1:9100 (%s)", spec, "");
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || port > 65535)
		return ctl_err(err, len, EINVAL, "ctl: --metrics %s%s: bad port (%s)", spec, "");
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	size_t hl = strlen(host);
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return ctl_err(err, len, EINVAL, "ctl: --metrics %s%s: bad IPv6 address (%s)",
				       spec, "");
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return ctl_err(err, len, EINVAL, "ctl: --metrics %s%s: bad IPv4 address (%s)",
				       spec, "");
		sl = sizeof(*s4);
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 128)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return ctl_err(err, len, e, "ctl: --metrics %s%s: cannot listen: %s (pick another "
			       "port)", spec, "");
	}
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	ctl->mport = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						    : ((struct sockaddr_in *)&ss)->sin_port);
	ctl->hfd = fd;
	return 0;
}

static void client_close(struct rf_ctl *ctl, unsigned i)
{
	struct rf_ctl_client *c = ctl->clients[i];
	epoll_ctl(ctl->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	rf_buf_free(&c->out);
	free(c);
	ctl->clients[i] = ctl->clients[--ctl->nclients];
	ctl->clients[ctl->nclients] = NULL;
}

static void watch(struct rf_ctl *ctl, struct rf_ctl_client *c, bool want_write)
{
	struct epoll_event ev = {.events = want_write ? EPOLLOUT : EPOLLIN, .data.ptr = c};
	epoll_ctl(ctl->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void serve_lines(struct rf_ctl *ctl, struct rf_ctl_client *c);

/* Write what is pending, then answer requests already read (pipelined); true when the
 * client must be closed. */
static bool flush_out(struct rf_ctl *ctl, struct rf_ctl_client *c)
{
	for (;;) {
		while (c->outoff < c->out.len) {
			ssize_t w = send(c->fd, c->out.p + c->outoff, c->out.len - c->outoff,
					 MSG_NOSIGNAL);
			if (w < 0) {
				if (errno == EAGAIN || errno == EINTR) {
					watch(ctl, c, true);
					return false;
				}
				return true;
			}
			c->outoff += (size_t)w;
			c->progress_ns = rf_ctl_now_ns();
		}
		rf_buf_reset(&c->out);
		c->outoff = 0;
		if (c->closing)
			return true;
		if (!c->http)
			serve_lines(ctl, c);
		if (!c->out.len)
			break;
	}
	watch(ctl, c, false);
	return false;
}

/* Answer every complete line in c->in (stops when an answer is pending). */
static void serve_lines(struct rf_ctl *ctl, struct rf_ctl_client *c)
{
	for (;;) {
		if (c->out.len)
			return; /* one answer at a time */
		char *nl = memchr(c->in, '\n', c->inlen);
		if (!nl) {
			if (c->inlen >= RF_CTL_MAX_REQUEST) {
				rf_buf_printf(&c->out, "{\"error\":\"request longer than %u bytes\"}\n",
					      RF_CTL_MAX_REQUEST);
				c->closing = true;
			}
			return;
		}
		size_t n = (size_t)(nl - c->in);
		rf_ctl_answer(ctl, c->in, n, &c->out);
		memmove(c->in, nl + 1, c->inlen - n - 1);
		c->inlen -= n + 1;
	}
}

static void serve_http(struct rf_ctl *ctl, struct rf_ctl_client *c)
{
	c->in[c->inlen] = '\0';
	if (strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n")) {
		rf_ctl_http_answer(ctl, c->in, &c->out);
		c->closing = true;
	} else if (c->inlen >= RF_CTL_MAX_REQUEST) {
		rf_buf_puts(&c->out, "HTTP/1.0 431 Request Header Fields Too Large\r\n"
				     "Content-Length: 0\r\nConnection: close\r\n\r\n");
		c->closing = true;
	}
}

/* Readable: take bytes, answer; true when the client must be closed. */
static bool on_read(struct rf_ctl *ctl, struct rf_ctl_client *c)
{
	if (c->out.len) /* an answer is pending: do not read more (bounded memory) */
		return flush_out(ctl, c);
	ssize_t r = recv(c->fd, c->in + c->inlen, RF_CTL_MAX_REQUEST - c->inlen, 0);
	if (r == 0)
		return true;
	if (r < 0)
		return errno != EAGAIN && errno != EINTR;
	c->inlen += (size_t)r;
	c->progress_ns = rf_ctl_now_ns();
	if (c->http)
		serve_http(ctl, c);
	else
		serve_lines(ctl, c);
	return c->out.len ? flush_out(ctl, c) : false;
}

static void hello(struct rf_ctl *ctl, struct rf_ctl_client *c)
{
	rf_buf_puts(&c->out, "{\"ringflow\":1,\"app\":");
	rf_json_str(&c->out, rf_stats_app(ctl->cfg.stats));
	rf_buf_printf(&c->out, ",\"pid\":%d,\"max_output_len\":%zu}\n", (int)getpid(),
		      ctl->cfg.max_output_len);
}

static void on_accept(struct rf_ctl *ctl, int lfd, bool http)
{
	for (int k = 0; k < 64; k++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or EMFILE: the rest wait in the backlog */
		if (ctl->nclients == ctl->cfg.max_clients) {
			char msg[160];
			int n = http ? snprintf(msg, sizeof(msg), "HTTP/1.0 503 Service Unavailable\r\n"
						"Content-Length: 0\r\nConnection: close\r\n\r\n")
				     : snprintf(msg, sizeof(msg), "{\"error\":\"too many clients (%u): "
						"try again\"}\n", ctl->cfg.max_clients);
			ssize_t w = send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
			(void)w; /* a full buffer: the client sees the close */
			close(fd);
			continue;
		}
		struct rf_ctl_client *c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->http = http;
		c->progress_ns = rf_ctl_now_ns();
		rf_buf_init(&c->out, ctl->cfg.max_output_len + 256);
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
		if (epoll_ctl(ctl->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
			continue;
		}
		ctl->clients[ctl->nclients++] = c;
		if (!http) {
			hello(ctl, c);
			if (flush_out(ctl, c))
				client_close(ctl, ctl->nclients - 1);
		}
	}
}

static unsigned find(struct rf_ctl *ctl, struct rf_ctl_client *c)
{
	for (unsigned i = 0; i < ctl->nclients; i++)
		if (ctl->clients[i] == c)
			return i;
	return ctl->nclients;
}

static void *ctl_main(void *arg)
{
	struct rf_ctl *ctl = arg;
	struct epoll_event evs[64];
	/* A QSBR reader that is offline except while an app command runs (ctl_cmd.c), so app
	 * commands may read RCU-protected tables (hash.h) and writers never wait for us. */
	rf_qsbr_register();
	rf_qsbr_offline();
	for (;;) {
		int n = epoll_wait(ctl->epfd, evs, 64, 100);
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &ctl->stop_efd) {
				rf_qsbr_online();
				rf_qsbr_unregister();
				return NULL;
			}
			if (p == &ctl->lfd || p == &ctl->hfd) {
				on_accept(ctl, p == &ctl->lfd ? ctl->lfd : ctl->hfd, p == &ctl->hfd);
				continue;
			}
			struct rf_ctl_client *c = p;
			unsigned idx = find(ctl, c);
			if (idx == ctl->nclients)
				continue; /* closed earlier in this batch */
			bool bye;
			if (evs[i].events & EPOLLOUT)
				bye = flush_out(ctl, c);
			else
				bye = on_read(ctl, c);
			if (!bye && (evs[i].events & (EPOLLERR | EPOLLHUP)) && !(evs[i].events & EPOLLIN))
				bye = true;
			if (bye)
				client_close(ctl, idx);
		}
		uint64_t now = rf_ctl_now_ns(), limit = (uint64_t)ctl->cfg.timeout_ms * 1000000u;
		for (unsigned i = 0; i < ctl->nclients;)
			if (now - ctl->clients[i]->progress_ns > limit)
				client_close(ctl, i);
			else
				i++;
	}
}

struct rf_ctl *rf_ctl_start(const struct rf_ctl_config *cfg, char *err, size_t len)
{
	if (!cfg || !cfg->stats) {
		ctl_err(err, len, EINVAL, "ctl: no stats registry given%s%s (%s)", "", "");
		return NULL;
	}
	struct rf_ctl *ctl = calloc(1, sizeof(*ctl));
	if (!ctl) {
		ctl_err(err, len, ENOMEM, "ctl: %s%s%s", "", "");
		return NULL;
	}
	ctl->cfg = *cfg;
	if (!ctl->cfg.max_clients)
		ctl->cfg.max_clients = 64;
	if (!ctl->cfg.max_output_len)
		ctl->cfg.max_output_len = 4u << 20;
	if (!ctl->cfg.timeout_ms)
		ctl->cfg.timeout_ms = 10000;
	ctl->lfd = ctl->hfd = ctl->stop_efd = ctl->epfd = -1;
	ctl->start_ns = rf_ctl_now_ns();
	pthread_mutex_init(&ctl->lock, NULL);
	ctl->clients = calloc(ctl->cfg.max_clients, sizeof(*ctl->clients));
	ctl->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ctl->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!ctl->clients || ctl->stop_efd < 0 || ctl->epfd < 0) {
		ctl_err(err, len, errno ? errno : ENOMEM, "ctl: cannot set up%s%s: %s", "", "");
		goto fail;
	}
	if (!cfg->sock_path) {
		char dir[80];
		rf_ctl_dir(dir, sizeof(dir));
		if (mkdir(dir, 0700) && errno != EEXIST) {
			ctl_err(err, len, errno, "ctl: cannot create %s%s: %s (set XDG_RUNTIME_DIR)",
				dir, "");
			goto fail;
		}
		sweep_own_pid(dir);
		snprintf(ctl->path, sizeof(ctl->path), "%s/%s.%d.sock", dir,
			 rf_stats_app(cfg->stats), (int)getpid());
	} else {
		snprintf(ctl->path, sizeof(ctl->path), "%s", cfg->sock_path);
	}
	if (ctl->path[0] && open_unix(ctl, err, len))
		goto fail;
	if (cfg->metrics && open_metrics(ctl, cfg->metrics, err, len))
		goto fail;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &ctl->stop_efd};
	epoll_ctl(ctl->epfd, EPOLL_CTL_ADD, ctl->stop_efd, &ev);
	if (ctl->lfd >= 0) {
		ev.data.ptr = &ctl->lfd;
		epoll_ctl(ctl->epfd, EPOLL_CTL_ADD, ctl->lfd, &ev);
	}
	if (ctl->hfd >= 0) {
		ev.data.ptr = &ctl->hfd;
		epoll_ctl(ctl->epfd, EPOLL_CTL_ADD, ctl->hfd, &ev);
	}
	int rc = pthread_create(&ctl->th, NULL, ctl_main, ctl);
	if (rc) {
		ctl_err(err, len, rc, "ctl: cannot start the control thread%s%s: %s", "", "");
		goto fail;
	}
	pthread_setname_np(ctl->th, "rf-ctl");
	ctl->running = true;
	return ctl;
fail:;
	int e = errno;
	rf_ctl_stop(ctl);
	errno = e;
	return NULL;
}

void rf_ctl_stop(struct rf_ctl *ctl)
{
	if (!ctl)
		return;
	if (ctl->running) {
		uint64_t one = 1;
		ssize_t w = write(ctl->stop_efd, &one, sizeof(one));
		(void)w;
		pthread_join(ctl->th, NULL);
	}
	while (ctl->nclients)
		client_close(ctl, ctl->nclients - 1);
	if (ctl->lfd >= 0) {
		close(ctl->lfd);
		unlink(ctl->path);
	}
	if (ctl->hfd >= 0)
		close(ctl->hfd);
	if (ctl->stop_efd >= 0)
		close(ctl->stop_efd);
	if (ctl->epfd >= 0)
		close(ctl->epfd);
	pthread_mutex_destroy(&ctl->lock);
	free(ctl->clients);
	if (ctl->own_stats)
		rf_stats_destroy(ctl->cfg.stats);
	free(ctl);
}

const char *rf_ctl_path(const struct rf_ctl *ctl)
{
	return ctl->lfd >= 0 ? ctl->path : "";
}

int rf_ctl_metrics_port(const struct rf_ctl *ctl)
{
	return ctl->hfd >= 0 ? ctl->mport : 0;
}
