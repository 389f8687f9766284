/* test_workers.c - the worker pool waits for jobs that queue jobs
 * (lib/core/workers.c: wap_workers_wait, as the git status walk uses it) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>

#include "workers.h"

struct tree {
	struct wap_workers *w;
	pthread_mutex_t mu;
	int ran;
};

struct node {
	struct tree *t;
	int depth;
};

/* each job queues two more, down to depth 0: 2^(d+1) - 1 jobs in all */
static void job(void *p)
{
	struct node *n = p;

	if (n->depth > 0)
		for (int i = 0; i < 2; i++) {
			struct node *c = malloc(sizeof(*c));
			assert_non_null(c);
			c->t = n->t;
			c->depth = n->depth - 1;
			assert_int_equal(wap_workers_submit(n->t->w, job, c), 0);
		}
	pthread_mutex_lock(&n->t->mu);
	n->t->ran++;
	pthread_mutex_unlock(&n->t->mu);
	free(n);
}

static void test_wait(void **state)
{
	struct tree t = { .w = wap_workers_new(2), .mu = PTHREAD_MUTEX_INITIALIZER };

	(void)state;
	assert_non_null(t.w);
	for (int round = 1; round <= 3; round++) {
		struct node *n = malloc(sizeof(*n));
		assert_non_null(n);
		n->t = &t;
		n->depth = 9;
		assert_int_equal(wap_workers_submit(t.w, job, n), 0);
		wap_workers_wait(t.w);
		/* every job ran, the ones queued by jobs too, and the
		 * threads stay for the next round */
		assert_int_equal(t.ran, round * ((1 << 10) - 1));
	}
	wap_workers_wait(t.w);	/* nothing queued: returns at once */
	wap_workers_free(t.w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
