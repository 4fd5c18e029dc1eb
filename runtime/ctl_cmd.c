/*
 * runtime/ctl_cmd.c: what the control thread answers: the built-in commands (list, info,
 * stats, pollers, reset, log-level), the app's commands (rf_ctl_register), and GET /metrics.
 * Every answer is one JSON line; every error is one line naming what was wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/common.h>
#include <ringflow/ctl.h>
#include <ringflow/log.h>
#include <ringflow/qsbr.h>
#include <ringflow/stats.h>

#include "ctl_pvt.h"

static bool cmd_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 31)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

static const char *const builtin[][2] = {
	{"list", "the commands and what they do"},
	{"info", "app, pid, uptime, log level"},
	{"stats", "the stats tree, or the subtree at \"path\" (e.g. \"ports/echo0\")"},
	{"pollers", "per poller: rounds, busy/idle/sleep time, rx/tx, drops, stalls"},
	{"reset", "count from zero from now on (JSON views; Prometheus counters never reset)"},
	{"log-level", "the log level, or set it with \"level\": err|warn|info|debug"},
};

int rf_ctl_register(struct rf_ctl *ctl, const char *name, const char *help, rf_ctl_cmd_fn fn,
		    void *arg)
{
	if (!ctl || !name || !fn || !cmd_name_ok(name))
		return -EINVAL;
	for (size_t i = 0; i < RF_ARRAY_SIZE(builtin); i++)
		if (strcmp(builtin[i][0], name) == 0)
			return -EEXIST;
	int rc = 0;
	pthread_mutex_lock(&ctl->lock);
	for (unsigned i = 0; i < ctl->ncmds; i++)
		if (strcmp(ctl->cmds[i].name, name) == 0)
			rc = -EEXIST;
	if (!rc && ctl->ncmds == RF_CTL_MAX_CMDS)
		rc = -ENOSPC;
	if (!rc) {
		struct rf_ctl_cmd *c = &ctl->cmds[ctl->ncmds++];
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->help = help ? help : "";
		c->fn = fn;
		c->arg = arg;
	}
	pthread_mutex_unlock(&ctl->lock);
	return rc;
}

static void error_line(struct rf_buf *out, const char *cmd, const char *msg)
{
	rf_buf_reset(out);
	rf_buf_puts(out, "{");
	if (cmd) {
		rf_buf_puts(out, "\"cmd\":");
		rf_json_str(out, cmd);
		rf_buf_puts(out, ",");
	}
	rf_buf_puts(out, "\"error\":");
	rf_json_str(out, msg);
	rf_buf_puts(out, "}\n");
}

static void begin(struct rf_buf *out, const char *cmd)
{
	rf_buf_puts(out, "{\"cmd\":");
	rf_json_str(out, cmd);
	rf_buf_puts(out, ",\"result\":");
}

static void cmd_list(struct rf_ctl *ctl, struct rf_buf *out)
{
	rf_buf_puts(out, "{");
	for (size_t i = 0; i < RF_ARRAY_SIZE(builtin); i++) {
		rf_json_str(out, builtin[i][0]);
		rf_buf_puts(out, ":");
		rf_json_str(out, builtin[i][1]);
		rf_buf_puts(out, ",");
	}
	pthread_mutex_lock(&ctl->lock);
	for (unsigned i = 0; i < ctl->ncmds; i++) {
		rf_json_str(out, ctl->cmds[i].name);
		rf_buf_puts(out, ":");
		rf_json_str(out, ctl->cmds[i].help);
		rf_buf_puts(out, ",");
	}
	pthread_mutex_unlock(&ctl->lock);
	if (out->len && out->p[out->len - 1] == ',')
		out->p[out->len - 1] = '}'; /* the last comma */
}

void rf_ctl_answer(struct rf_ctl *ctl, const char *line, size_t len, struct rf_buf *out)
{
	char err[160];
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0) {
		error_line(out, NULL, "empty request: send a JSON object such as {\"cmd\":\"list\"}");
		return;
	}
	struct rf_json *req = rf_json_parse(line, len, err, sizeof(err));
	if (!req) {
		error_line(out, NULL, err);
		return;
	}
	const char *cmd = rf_json_get_str(req, "cmd", NULL);
	if (req->type != RF_JSON_OBJ || !cmd) {
		error_line(out, NULL, "a request is a JSON object with a string \"cmd\", e.g. "
				      "{\"cmd\":\"list\"}");
		rf_json_free(req);
		return;
	}
	begin(out, cmd);
	size_t mark = out->len;
	int rc = 0;
	if (strcmp(cmd, "list") == 0) {
		cmd_list(ctl, out);
	} else if (strcmp(cmd, "info") == 0) {
		rf_buf_puts(out, "{\"app\":");
		rf_json_str(out, rf_stats_app(ctl->cfg.stats));
		rf_buf_printf(out, ",\"pid\":%d,\"uptime_s\":%.3f,\"log_level\":\"%s\","
			      "\"socket\":", (int)getpid(),
			      (double)(rf_ctl_now_ns() - ctl->start_ns) / 1e9,
			      rf_log_level_name(rf_log_get_level()));
		rf_json_str(out, ctl->path);
		rf_buf_printf(out, ",\"metrics_port\":%d}", rf_ctl_metrics_port(ctl));
	} else if (strcmp(cmd, "stats") == 0 || strcmp(cmd, "pollers") == 0) {
		const char *path = strcmp(cmd, "pollers") == 0 ? "pollers"
							       : rf_json_get_str(req, "path", "");
		rc = rf_stats_write_json(ctl->cfg.stats, path, out);
		if (rc == -ENOENT)
			snprintf(err, sizeof(err), "no stats under \"%.80s\": try \"stats\" without a "
				 "path to see the tree", path);
	} else if (strcmp(cmd, "reset") == 0) {
		rf_stats_reset(ctl->cfg.stats);
		rf_buf_puts(out, "true");
	} else if (strcmp(cmd, "log-level") == 0) {
		const char *lv = rf_json_get_str(req, "level", NULL);
		int l = lv ? rf_log_level_parse(lv) : (int)rf_log_get_level();
		if (l < 0) {
			rc = -EINVAL;
			snprintf(err, sizeof(err), "log level \"%.40s\": use err, warn, info or debug", lv);
		} else {
			if (lv)
				rf_log_set_level((enum rf_log_level)l);
			rf_buf_printf(out, "\"%s\"", rf_log_level_name(l));
		}
	} else {
		struct rf_ctl_cmd c = {.fn = NULL};
		pthread_mutex_lock(&ctl->lock);
		for (unsigned i = 0; i < ctl->ncmds; i++)
			if (strcmp(ctl->cmds[i].name, cmd) == 0)
				c = ctl->cmds[i];
		pthread_mutex_unlock(&ctl->lock);
		if (!c.fn) {
			rc = -ENOENT;
			snprintf(err, sizeof(err), "unknown command \"%.40s\": {\"cmd\":\"list\"} lists "
				 "them", cmd);
		} else {
			rf_qsbr_online();
			rc = c.fn(req, out, c.arg);
			rf_qsbr_offline();
			if (rc) {
				snprintf(err, sizeof(err), "%.150s", out->len > mark ? out->p + mark : "failed");
				if (rc == -E2BIG)
					rc = -EFBIG; /* the app's message, not ours */
			}
		}
	}
	if (!rc && out->full)
		rc = -E2BIG;
	if (rc == -E2BIG)
		snprintf(err, sizeof(err), "answer longer than max_output_len (%zu bytes): ask for "
			 "a subtree", ctl->cfg.max_output_len);
	if (rc) {
		char c2[48];
		snprintf(c2, sizeof(c2), "%.40s", cmd);
		error_line(out, c2, err);
	} else {
		rf_buf_puts(out, "}\n");
	}
	rf_json_free(req);
}

void rf_ctl_http_answer(struct rf_ctl *ctl, const char *head, struct rf_buf *out)
{
	bool get = strncmp(head, "GET ", 4) == 0, head_only = strncmp(head, "HEAD ", 5) == 0;
	const char *p = head + (get ? 4 : 5);
	size_t plen = strcspn(p, " ?\r\n");
	if (!get && !head_only) {
		rf_buf_puts(out, "HTTP/1.0 405 Method Not Allowed\r\nAllow: GET\r\n"
				 "Content-Length: 0\r\nConnection: close\r\n\r\n");
		return;
	}
	if (!(plen == 8 && memcmp(p, "/metrics", 8) == 0)) {
		const char *body = "ringflow: metrics are at /metrics\n";
		rf_buf_printf(out, "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n"
			      "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", strlen(body), body);
		return;
	}
	struct rf_buf body;
	rf_buf_init(&body, ctl->cfg.max_output_len);
	int rc = rf_stats_write_prometheus(ctl->cfg.stats, &body);
	if (rc) {
		rf_buf_puts(out, "HTTP/1.0 500 Internal Server Error\r\nContent-Length: 0\r\n"
				 "Connection: close\r\n\r\n");
	} else {
		rf_buf_printf(out, "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
			      "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			      body.len);
		if (get && body.len)
			rf_buf_append(out, body.p, body.len);
	}
	rf_buf_free(&body);
}
