/*
 * bench/tools/stolen_load.c: the load ringflow-stolen runs while it measures: the UDP flood
 * over the veth bed with RPS aimed at the measured CPU, the same flood over loopback, or a
 * command of the user's. Whatever it creates is removed again, on SIGINT/SIGTERM too.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stolen.h"

extern char **environ;

const char *load_name(enum load_kind k)
{
	static const char *const names[] = {"veth_rps", "loopback", "cmd"};
	return names[k];
}

static struct rf_vethbed *cleanup_bed; /* removed on SIGINT/SIGTERM too */

static void on_signal(int sig)
{
	if (cleanup_bed)
		rf_vethbed_destroy_in_signal(cleanup_bed);
	signal(sig, SIG_DFL);
	raise(sig);
}

int load_open(struct load *l, const struct opts *o)
{
	memset(l, 0, sizeof(*l));
	l->kind = o->load;
	l->cmd_pid = -1;
	if (l->kind == LOAD_CMD)
		return 0;
	if (l->kind == LOAD_VETH) {
		int rc = geteuid() == 0 ? rf_vethbed_create(&l->bed, "st") : -EPERM;
		if (rc == 0) {
			cleanup_bed = &l->bed;
			signal(SIGINT, on_signal);
			signal(SIGTERM, on_signal);
			rc = rf_vethbed_set_rps(&l->bed, 1, o->cpu);
			if (rc == 0)
				rc = rf_flood_open_veth(&l->flood, &l->bed);
			if (rc == 0)
				return 0;
			rf_vethbed_destroy(&l->bed);
			cleanup_bed = NULL;
		}
		if (o->load_forced) {
			fprintf(stderr, "ringflow-stolen: cannot build the veth bed: %s (needs root "
					"and iproute2; try --load loopback)\n",
				strerror(-rc));
			return rc;
		}
		snprintf(l->why, sizeof(l->why), "no veth bed (%s%s), so loopback",
			 strerror(-rc), geteuid() ? ": needs root" : "");
		l->kind = LOAD_LOOPBACK;
	}
	int rc = rf_flood_open_loopback(&l->flood);
	if (rc)
		fprintf(stderr, "ringflow-stolen: cannot open loopback UDP sockets: %s\n",
			strerror(-rc));
	return rc;
}

int load_start(struct load *l, const struct opts *o)
{
	if (l->kind != LOAD_CMD)
		return rf_flood_start(&l->flood, o->load_cpu, o->packets, o->load_seconds);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP); /* its own group: we stop all of it */
	posix_spawnattr_setpgroup(&at, 0);
	const char *const argv[] = {"sh", "-c", o->load_cmd, NULL};
	int rc = posix_spawn(&l->cmd_pid, "/bin/sh", NULL, &at, (char *const *)argv, environ);
	posix_spawnattr_destroy(&at);
	return -rc;
}

uint64_t load_stop(struct load *l)
{
	if (l->kind != LOAD_CMD)
		return rf_flood_stop(&l->flood);
	if (l->cmd_pid > 0) {
		kill(-l->cmd_pid, SIGTERM);
		int st;
		for (int i = 0; i < 50 && waitpid(l->cmd_pid, &st, WNOHANG) == 0; i++)
			usleep(20000);
		if (waitpid(l->cmd_pid, &st, WNOHANG) == 0) {
			kill(-l->cmd_pid, SIGKILL);
			waitpid(l->cmd_pid, &st, 0);
		}
		l->cmd_pid = -1;
	}
	return 0;
}

void load_close(struct load *l)
{
	load_stop(l);
	if (l->kind != LOAD_CMD)
		rf_flood_close(&l->flood);
	if (cleanup_bed) {
		rf_vethbed_destroy(cleanup_bed);
		cleanup_bed = NULL;
	}
}

