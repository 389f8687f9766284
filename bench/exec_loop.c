/* exec_loop.c - per-call cost of wap_proc_run in a warm process (what
 * `wap serve` pays per exec call): N runs of `true`, median in microseconds.
 * With --sandbox each call also builds and removes the sandbox of
 * `wap exec --sandbox` in the current directory, as a server's default
 * exec does (wap_sandbox_prepare, wap_sandbox_release); --sandbox --deny NAME
 * under a restrictedCommands list naming NAME (the kernel's half of it).
 * Built by bench/exec.sh against build/norm/libwap.a. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmdpolicy.h"
#include "landlock.h"
#include "proc.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 500;
	int sandboxed = argc > 2 && !strcmp(argv[2], "--sandbox");
	char *args[] = { "/bin/true", NULL };
	double *t = calloc(n, sizeof(*t));
	struct wap_proc_opts o = { .argv = args, .cwdfd = -1, .stdin_fd = -1,
				   .timeout_ms = 30000, .kill_after_ms = 5000,
				   .max_output = 51200, .save_fd = { -1, -1 } };
	char *deny[] = { argc > 4 && !strcmp(argv[3], "--deny") ? argv[4] : NULL, NULL };
	struct wap_cmdrules rules = { .deny = deny, .deny_name = "--deny" };
	struct wap_sandbox_opts so = { .fs = true, .path = getenv("PATH"),
				       .rules = { deny[0] ? &rules : NULL } };
	struct wap_ws ws;
	struct wap_err err = { 0 };

	if (sandboxed && wap_ws_init(&ws, ".", NULL, &err)) {
		fprintf(stderr, "exec_loop: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct wap_sandbox sb = { .ruleset_fd = -1, .list_fd = -1 };
		struct wap_proc_result r;
		struct timespec a, b;
		int rc;

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (sandboxed && wap_sandbox_prepare(&sb, &ws, &so, &err)) {
			fprintf(stderr, "exec_loop: %s\n", err.msg);
			return 1;
		}
		o.sandbox = sandboxed ? &sb : NULL;
		rc = wap_proc_run(&o, &r, &err);
		if (sandboxed)
			wap_sandbox_release(&sb);
		if (rc) {
			fprintf(stderr, "exec_loop: %s\n", err.msg);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		wap_proc_result_release(&r);
		t[i] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
	}
	qsort(t, n, sizeof(*t), cmp);
	printf("%.1f\n", t[n / 2]);
	if (sandboxed)
		wap_ws_release(&ws);
	free(t);
	return 0;
}
