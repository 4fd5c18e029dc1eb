/*
 * runtime/ctl_pvt.h: the control thread's state, shared by ctl.c (sockets, clients, the
 * event loop) and ctl_cmd.c (what a request or an HTTP GET is answered with).
 */
#ifndef RINGFLOW_CTL_PVT_H
#define RINGFLOW_CTL_PVT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <ringflow/ctl.h>
#include <ringflow/json.h>

struct rf_ctl_cmd {
	char name[32];
	const char *help;
	rf_ctl_cmd_fn fn;
	void *arg;
};

struct rf_ctl {
	struct rf_ctl_config cfg;
	char path[108];
	int lfd, hfd, stop_efd, epfd;
	int mport;
	pthread_t th;
	bool running;
	pthread_mutex_t lock; /* cmds */
	unsigned ncmds;
	struct rf_ctl_cmd cmds[RF_CTL_MAX_CMDS];
	struct rf_ctl_client **clients; /* max_clients slots */
	unsigned nclients;
	uint64_t start_ns;
	bool own_stats; /* made by rf_ctl_start_app: rf_ctl_stop destroys the registry */
};

/* Answer one request line (without its newline) into out: one JSON line with '\n'. */
void rf_ctl_answer(struct rf_ctl *ctl, const char *line, size_t len, struct rf_buf *out);
/* Answer an HTTP request head into out (a whole HTTP/1.0 response). */
void rf_ctl_http_answer(struct rf_ctl *ctl, const char *head, struct rf_buf *out);
uint64_t rf_ctl_now_ns(void);

#endif /* RINGFLOW_CTL_PVT_H */
