/*
 * bench/main.c: `ringflow-bench SUBCOMMAND [options]`, the dispatcher.
 *
 * Subcommands register themselves (RF_BENCH_COMMAND in their own file), so adding a benchmark
 * is adding one source file to bench/CMakeLists.txt. The options every subcommand shares are
 * parsed here; whatever is left is handed to the subcommand.
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static struct rf_bench_command *commands;

void rf_bench_register(struct rf_bench_command *cmd)
{
	/* Keep the list sorted by name so --help is stable whatever the link order. */
	struct rf_bench_command **p = &commands;
	while (*p && strcmp((*p)->name, cmd->name) < 0)
		p = &(*p)->next;
	cmd->next = *p;
	*p = cmd;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ringflow-bench SUBCOMMAND [options]\n"
		"\n"
		"Runs ringflow's implementation and its peers interleaved in one process and prints\n"
		"the median and best of each, side by side, with the ratio.\n"
		"\n"
		"subcommands:\n");
	for (struct rf_bench_command *c = commands; c; c = c->next)
		fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out,
		"\n"
		"options (every subcommand):\n"
		"  --json          one JSON object per result on stdout (keys bench, impl, case,\n"
		"                  value, unit, best, reps, better); the table goes to stderr\n"
		"  --repeats N     measured rounds per case, median reported (default 5, at least 5)\n"
		"  --duration S    seconds per sample (default 0.2)\n"
		"  --max-time S    bound on the whole run; later cases are skipped and said so (default 120)\n"
		"  --cpus A,B      CPUs for the two sides of a cross-core case (default 0,1)\n"
		"  --case SUBSTR   only the cases whose name contains SUBSTR\n"
		"  --quick         smallest sizes, for tests and the demo\n"
		"  --help          this text; `ringflow-bench SUBCOMMAND --help` adds its cases\n");
}

static struct rf_bench_command *find(const char *name)
{
	for (struct rf_bench_command *c = commands; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static int parse_double(const char *opt, const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (!s[0] || *end || v <= 0) {
		fprintf(stderr, "ringflow-bench: %s wants a positive number, got '%s'\n", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	struct rf_bench_opts opts = {
		.json = false, .repeats = 5, .duration = 0.2, .max_time = 120, .cpu = {0, 1}};

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	struct rf_bench_command *cmd = find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "ringflow-bench: unknown subcommand '%s' (see ringflow-bench --help)\n",
			argv[1]);
		return 2;
	}

	/* Strip the common options; keep the rest (and argv[1]) for the subcommand. */
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	if (!rest)
		return 1;
	int n_rest = 0;
	rest[n_rest++] = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printf("usage: ringflow-bench %s [options]\n%s\n\n", cmd->name, cmd->summary);
			if (cmd->help)
				cmd->help(stdout);
			printf("\n");
			usage(stdout);
			free(rest);
			return 0;
		} else if (strcmp(a, "--json") == 0) {
			opts.json = true;
		} else if (strcmp(a, "--quick") == 0) {
			opts.quick = true;
		} else if ((strcmp(a, "--repeats") == 0 || strcmp(a, "--duration") == 0 ||
			    strcmp(a, "--max-time") == 0 || strcmp(a, "--cpus") == 0 ||
			    strcmp(a, "--case") == 0)) {
			if (!val) {
				fprintf(stderr, "ringflow-bench: %s needs a value\n", a);
				free(rest);
				return 2;
			}
			i++;
			if (strcmp(a, "--repeats") == 0) {
				char *end;
				long r = strtol(val, &end, 10);
				if (*end || r < 5 || r > 64) {
					fprintf(stderr, "ringflow-bench: --repeats wants 5..64, got '%s'\n", val);
					free(rest);
					return 2;
				}
				opts.repeats = (unsigned)r;
			} else if (strcmp(a, "--duration") == 0) {
				if (parse_double(a, val, &opts.duration)) {
					free(rest);
					return 2;
				}
			} else if (strcmp(a, "--max-time") == 0) {
				if (parse_double(a, val, &opts.max_time)) {
					free(rest);
					return 2;
				}
			} else if (strcmp(a, "--cpus") == 0) {
				unsigned x, y;
				if (sscanf(val, "%u,%u", &x, &y) != 2) {
					fprintf(stderr, "ringflow-bench: --cpus wants A,B, got '%s'\n", val);
					free(rest);
					return 2;
				}
				opts.cpu[0] = x;
				opts.cpu[1] = y;
			} else {
				opts.filter = val;
			}
		} else {
			rest[n_rest++] = argv[i];
		}
	}
	rest[n_rest] = NULL;
	int rc = cmd->run(n_rest, rest, &opts);
	free(rest);
	return rc;
}
