/* test_match.c - the matcher's limits: a PCRE2 limit, the time bound and a
 * cancel each stop matching with a reason and a place, never a silent
 * "no match". */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "match.h"

static struct wap_matcher *matcher(const char *pat, bool multiline, long time_ms)
{
	const char *pats[] = { pat };
	struct wap_match_opts o = { .patterns = pats, .n = 1, .multiline = multiline,
				    .time_ms = time_ms };
	struct wap_err err = { 0 };
	struct wap_matcher *m = wap_matcher_new(&o, &err);

	assert_non_null(m);
	return m;
}

/* "one\ntwo\n" + 30,000 a's + "xc\nfour\n" */
static char *catastrophic(size_t *len)
{
	size_t n = 8 + 30000 + 8;
	char *b = malloc(n + 1), *p = b;

	assert_non_null(b);
	p = stpcpy(p, "one\ntwo\n");
	memset(p, 'a', 30000);
	p += 30000;
	p = stpcpy(p, "xc\nfour\n");
	*len = (size_t)(p - b);
	return b;
}

static void test_limit_names_the_line(void **state)
{
	static const bool multi[] = { false, true };
	size_t len, ls, le;
	char *buf = catastrophic(&len);

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct wap_matcher *m = matcher("(a|aa)*[bc]", multi[k], 0);
		struct wap_mstate *s = wap_mstate_new(m);
		const char *where = NULL;
		struct wap_err err = { 0 };

		wap_match_begin(s);
		assert_false(wap_match_line(m, s, buf, len, 0, &ls, &le));
		assert_true(wap_match_error(s, &where) < 0);
		assert_ptr_equal(where, buf + 8);	/* the start of line 3 */
		assert_int_equal(wap_match_err(wap_match_error(s, NULL), "f.c", 3, &err), -1);
		assert_int_equal(err.kind, WAP_E_TOO_LARGE);
		assert_string_equal(err.msg, "regex match limit hit in f.c:3; simplify the pattern");
		/* sticky until the next buffer */
		assert_false(wap_match_line(m, s, buf, len, 0, &ls, &le));
		wap_match_begin(s);
		assert_int_equal(wap_match_error(s, NULL), 0);
		wap_mstate_free(s);
		wap_matcher_free(m);
	}
	free(buf);
}

static void test_sub_limit(void **state)
{
	size_t len, ms, me;
	char *buf = catastrophic(&len);
	struct wap_matcher *m = matcher("(a|aa)*[bc]", false, 0);
	struct wap_mstate *s = wap_mstate_new(m);

	(void)state;
	wap_match_begin(s);
	assert_false(wap_match_sub(m, s, buf + 8, 30002, 0, &ms, &me));
	assert_int_equal(wap_match_error(s, NULL) < 0, 1);
	wap_mstate_free(s);
	wap_matcher_free(m);
	free(buf);
}

/* many lines each costing some backtracking: the time bound ends it */
static void test_time_bound(void **state)
{
	size_t n = 64u << 20, ls, le;
	char *buf = malloc(n);
	const char line[] = "the quick brown fox jumps over the lazy dog 0123456789\n";
	struct wap_matcher *m = matcher("(\\w+\\s)+\\d+x", false, 200);
	struct wap_mstate *s = wap_mstate_new(m);
	struct timespec t0, t1;
	long ms;

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i + sizeof(line) - 1 <= n; i += sizeof(line) - 1)
		memcpy(buf + i, line, sizeof(line) - 1);
	n -= n % (sizeof(line) - 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	wap_match_begin(s);
	assert_false(wap_match_line(m, s, buf, n, 0, &ls, &le));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_int_equal(wap_match_error(s, NULL), WAP_MATCH_TIMEOUT);
	assert_true(ms < 2000);
	wap_mstate_free(s);
	wap_matcher_free(m);
	free(buf);
}

/* one line whose every start position backtracks a while but stays under
 * PCRE2's match limit (which counts each start position afresh): the
 * time bound still ends it, and a cancel is seen, inside that one line */
static char *segments(size_t *len)
{
	const char seg[] = "xxxxxxxxxxxxxxxxxxxxxx-";
	size_t k = 2000, n = k * (sizeof(seg) - 1) + 2;
	char *b = malloc(n + 1), *p = b;

	assert_non_null(b);
	for (size_t i = 0; i < k; i++)
		p = stpcpy(p, seg);
	p = stpcpy(p, "y\n");
	*len = (size_t)(p - b);
	return b;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static void test_time_bound_one_line(void **state)
{
	static const bool multi[] = { false, true };
	size_t len, ls, le;
	char *buf = segments(&len);

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct wap_matcher *m = matcher("(x+x+)+y", multi[k], 200);
		struct wap_mstate *s = wap_mstate_new(m);
		struct timespec t0;
		long ms;

		/* uncut, this line is some 40 s of backtracking */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		wap_match_begin(s);
		assert_false(wap_match_line(m, s, buf, len, 0, &ls, &le));
		ms = ms_since(&t0);
		assert_int_equal(wap_match_error(s, NULL), WAP_MATCH_TIMEOUT);
		assert_true(ms < 5000);
		wap_mstate_free(s);
		wap_matcher_free(m);
	}
	free(buf);
}

static struct wap_cancel late_cancel = WAP_CANCEL_INIT;

static void on_alarm(int sig)
{
	wap_cancel_set(&late_cancel, sig);
}

static void test_cancel_one_line(void **state)
{
	size_t len, ls, le;
	char *buf = segments(&len);
	struct wap_matcher *m = matcher("(x+x+)+y", false, 0);
	struct wap_mstate *s = wap_mstate_new(m);
	struct timespec t0;
	long ms;

	(void)state;
	signal(SIGALRM, on_alarm);
	wap_mstate_set_cancel(s, &late_cancel);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	alarm(1);
	wap_match_begin(s);
	assert_false(wap_match_line(m, s, buf, len, 0, &ls, &le));
	ms = ms_since(&t0);
	alarm(0);
	assert_int_equal(wap_match_error(s, NULL), WAP_MATCH_CANCELLED);
	assert_true(ms < 6000);
	wap_mstate_free(s);
	wap_matcher_free(m);
	free(buf);
}

static void test_cancel(void **state)
{
	struct wap_cancel cancelled = WAP_CANCEL_INIT;
	size_t ls, le;
	struct wap_matcher *m = matcher("needle", false, 0);
	struct wap_mstate *s = wap_mstate_new(m);
	struct wap_err err = { 0 };

	(void)state;
	wap_cancel_set(&cancelled, 1);
	wap_mstate_set_cancel(s, &cancelled);
	wap_match_begin(s);
	assert_false(wap_match_line(m, s, "a needle\n", 9, 0, &ls, &le));
	assert_int_equal(wap_match_error(s, NULL), WAP_MATCH_CANCELLED);
	wap_match_err(WAP_MATCH_CANCELLED, "f.c", 1, &err);
	assert_int_equal(err.kind, WAP_E_FAILED);	/* the one error of a cancel */
	assert_string_equal(err.msg, "Operation cancelled");
	wap_mstate_set_cancel(s, NULL);
	wap_match_begin(s);
	assert_true(wap_match_line(m, s, "a needle\n", 9, 0, &ls, &le));
	assert_int_equal(wap_match_error(s, NULL), 0);
	wap_mstate_free(s);
	wap_matcher_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit_names_the_line),
		cmocka_unit_test(test_sub_limit),
		cmocka_unit_test(test_time_bound),
		cmocka_unit_test(test_time_bound_one_line),
		cmocka_unit_test(test_cancel_one_line),
		cmocka_unit_test(test_cancel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
