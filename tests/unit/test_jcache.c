/* test_jcache.c - the per-thread cache of jansson's blocks (lib/core/json.c,
 * wap_json_cache_init): a reused block is big enough for what it is given
 * (strings of every length around the 16-byte classes, all live at once and
 * checked byte for byte afterwards, so a block too small shows as another
 * value's bytes overwritten); blocks cross threads; what jansson returns
 * may go to free(); a value made before the cache was on may be freed
 * through it.  (Under ASan the cache is off and this checks jansson alone.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static json_t *before;	/* made with plain malloc, before the cache */

#define LIVE 600

/* LIVE strings of lengths 0 .. LIVE-1 (each a byte of its own), in an
 * object under keys of growing length, ROUNDS times over; all checked
 * while all are live */
static void churn(int seed, int rounds)
{
	for (int r = 0; r < rounds; r++) {
		json_t *o = json_object(), *a = json_array();
		char key[300], *s = malloc(LIVE + 1);

		assert_non_null(s);
		for (int n = 0; n < LIVE; n++) {
			int kl = 1 + (n + seed) % 290;
			memset(key, 'a' + (n + r) % 26, kl);
			snprintf(key + kl, sizeof(key) - kl, "%d", n);
			memset(s, 'A' + (n + seed + r) % 26, n);
			s[n] = 0;
			json_array_append_new(a, json_stringn(s, n));
			json_object_set_new(o, key, json_integer(n * 7 + seed));
		}
		for (int n = 0; n < LIVE; n++) {
			const json_t *v = json_array_get(a, n);
			const char *t = json_string_value(v);
			assert_int_equal(json_string_length(v), n);
			for (int i = 0; i < n; i++)
				assert_int_equal(t[i], 'A' + (n + seed + r) % 26);
		}
		assert_int_equal(json_object_size(o), LIVE);
		{
			/* json_dumps' text is jansson's: free() takes it */
			char *d = json_dumps(a, JSON_COMPACT);
			char *w = wap_json_dumps(a, NULL);
			assert_non_null(d);
			assert_string_equal(d, w);
			free(d);
			free(w);
		}
		json_decref(o);
		json_decref(a);
		free(s);
	}
}

static void *worker(void *arg)
{
	churn((int)(size_t)arg, 20);
	return NULL;
}

static void *make_one(void *arg)
{
	(void)arg;
	return json_pack("{s:s, s:[i, s]}", "path", "small.txt", "list", 1, "x");
}

static void test_reuse_and_threads(void **state)
{
	pthread_t t[4];
	json_t *v;

	(void)state;
	json_decref(before);	/* a plain malloc block into the cache */
	churn(0, 20);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)(i + 1)), 0);
	churn(9, 20);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	/* made in a thread that has ended, freed here */
	assert_int_equal(pthread_create(&t[0], NULL, make_one, NULL), 0);
	pthread_join(t[0], (void **)&v);
	assert_non_null(v);
	assert_string_equal(json_string_value(json_object_get(v, "path")), "small.txt");
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse_and_threads),
	};

	before = json_pack("{s:s, s:i}", "k", "a string of some length", "n", 3);
	wap_json_cache_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
