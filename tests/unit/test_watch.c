/* test_watch.c - lib/fs/watch.c: recursive inotify watching, patterns,
 * default exclusions, coalescing, unwatch. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "strbuf.h"
#include "watch.h"

static struct wap_ws ws;
static char dir[] = "/tmp/wap-watch-XXXXXX";
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct wap_sb log_sb = WAP_SB_INIT;

static void on_change(void *arg, const char *path, const char *type)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	wap_sb_addf(&log_sb, "%s %s\n", type, path);
	pthread_mutex_unlock(&mu);
}

/* wait until the log holds LINE, then give it back and clear it */
static void expect_log(const char *want)
{
	for (int i = 0; i < 300; i++) {
		pthread_mutex_lock(&mu);
		if (log_sb.len && strstr(log_sb.buf, want)) {
			pthread_mutex_unlock(&mu);
			usleep(250000);	/* anything else coalesced in comes now */
			return;
		}
		pthread_mutex_unlock(&mu);
		usleep(10000);
	}
	fail_msg("never saw [%s]; log: [%s]", want, log_sb.buf ? log_sb.buf : "");
}

static char *take_log(void)
{
	char *s;
	pthread_mutex_lock(&mu);
	s = log_sb.len ? wap_sb_detach(&log_sb) : strdup("");
	log_sb = (struct wap_sb)WAP_SB_INIT;
	pthread_mutex_unlock(&mu);
	return s;
}

static void sh(const char *fmt, const char *arg)
{
	char cmd[512], full[700];
	snprintf(cmd, sizeof(cmd), fmt, arg);
	snprintf(full, sizeof(full), "cd %s && %s", dir, cmd);
	assert_int_equal(system(full), 0);
}

static int setup(void **state)
{
	struct wap_err err = { 0 };
	char cmd[128];
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/src/deep %s/node_modules/x", dir, dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(wap_ws_init(&ws, dir, NULL, &err), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	wap_ws_release(&ws);
	wap_sb_release(&log_sb);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_watch(void **state)
{
	struct wap_err err = { 0 };
	struct wap_watch *w = wap_watch_new(&ws, on_change, NULL, &err);
	char id[WAP_WATCH_ID_LEN], id2[WAP_WATCH_ID_LEN], *s;
	(void)state;

	assert_non_null(w);
	assert_int_equal(wap_watch_add(w, "**/*.txt", id, &err), 0);
	assert_string_equal(id, "watch-1");
	/* root, src, src/deep; node_modules is excluded */
	assert_int_equal(wap_watch_dirs(w), 3);

	/* create + write coalesce into one "created" */
	sh("echo hi > src/deep/a.txt", NULL);
	expect_log("created src/deep/a.txt\n");
	s = take_log();
	assert_string_equal(s, "created src/deep/a.txt\n");
	free(s);
	sh("echo more >> src/deep/a.txt", NULL);
	expect_log("changed src/deep/a.txt\n");
	free(take_log());
	sh("rm src/deep/a.txt", NULL);
	expect_log("deleted src/deep/a.txt\n");
	free(take_log());

	/* not matching the pattern, or excluded: nothing */
	sh("echo x > src/b.c && echo x > node_modules/x/c.txt && echo y > top.txt", NULL);
	expect_log("created top.txt\n");
	s = take_log();
	assert_string_equal(s, "created top.txt\n");
	free(s);

	/* a directory made later is watched, and what it holds is seen */
	sh("mkdir -p new/sub && echo z > new/sub/n.txt", NULL);
	expect_log("created new/sub/n.txt\n");
	free(take_log());
	sh("echo again >> new/sub/n.txt", NULL);
	expect_log("changed new/sub/n.txt\n");
	free(take_log());

	/* created and deleted at once: nothing to say */
	sh("echo t > gone.txt && rm gone.txt && echo q > after.txt", NULL);
	expect_log("created after.txt\n");
	s = take_log();
	assert_null(strstr(s, "gone.txt"));
	free(s);

	/* an atomic write over an existing file (wap's own writes) is a
	 * change; its temporary file is never reported */
	{
		struct wap_wopts wo = { .mode = WAP_W_OVERWRITE };
		struct wap_wres wr;
		assert_int_equal(wap_write_file(&ws, "top.txt", "new\n", 4, &wo, &wr, &err), 0);
		assert_int_equal(wap_write_file(&ws, "fresh.txt", "new\n", 4, &wo, &wr, &err), 0);
	}
	expect_log("created fresh.txt\n");
	expect_log("changed top.txt\n");
	s = take_log();
	assert_null(strstr(s, ".wap-"));
	assert_null(strstr(s, "created top.txt"));
	free(s);

	/* a second pattern without '/' matches at any depth; unwatch */
	assert_int_equal(wap_watch_add(w, "*.c", id2, &err), 0);
	assert_int_equal(wap_watch_remove(w, id, &err), 0);
	sh("echo c >> src/b.c && echo t >> top.txt", NULL);
	expect_log("changed src/b.c\n");
	s = take_log();
	assert_string_equal(s, "changed src/b.c\n");
	free(s);
	assert_int_equal(wap_watch_remove(w, id, &err), -1);
	assert_string_equal(err.msg, "Watcher not found: watch-1");
	wap_err_release(&err);
	assert_int_equal(wap_watch_add(w, "", id, &err), -1);
	assert_string_equal(err.msg, "Missing pattern");
	wap_err_release(&err);
	wap_watch_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
