/* core/workers.c - a fixed thread pool with a FIFO job queue. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "workers.h"

struct job {
	void (*fn)(void *);
	void *arg;
	struct job *next;
};

struct wap_workers {
	pthread_mutex_t mu;
	pthread_cond_t cv, idle;
	struct job *head, *tail;
	int busy;		/* jobs running */
	bool stop;
	int n;
	pthread_t *th;
};

static void *worker(void *p)
{
	struct wap_workers *w = p;

	for (;;) {
		struct job *j;

		pthread_mutex_lock(&w->mu);
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		j = w->head;
		if (!j) {
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		w->busy++;
		pthread_mutex_unlock(&w->mu);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&w->mu);
		if (!--w->busy && !w->head)
			pthread_cond_broadcast(&w->idle);
		pthread_mutex_unlock(&w->mu);
	}
}

struct wap_workers *wap_workers_new(int n)
{
	struct wap_workers *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (n < 1)
		n = 1;
	w->th = calloc(n, sizeof(*w->th));
	if (!w->th) {
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	pthread_cond_init(&w->idle, NULL);
	for (w->n = 0; w->n < n; w->n++)
		if (pthread_create(&w->th[w->n], NULL, worker, w))
			break;
	if (!w->n) {
		wap_workers_free(w);
		return NULL;
	}
	return w;
}

int wap_workers_submit(struct wap_workers *w, void (*fn)(void *), void *arg)
{
	struct job *j = malloc(sizeof(*j));

	if (!j)
		return -1;
	j->fn = fn;
	j->arg = arg;
	j->next = NULL;
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

void wap_workers_wait(struct wap_workers *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->head || w->busy)
		pthread_cond_wait(&w->idle, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

void wap_workers_free(struct wap_workers *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < w->n; i++)
		pthread_join(w->th[i], NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	pthread_cond_destroy(&w->idle);
	free(w->th);
	free(w);
}
