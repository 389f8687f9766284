/* core/workers.h - a fixed pool of threads running queued jobs in order.
 *
 * Used by the servers so that long tool calls run while the transport
 * keeps reading (cancellation, /health, other calls).  The pool owns
 * nothing of a job but the queue entry: FN receives ARG and is responsible
 * for it.
 */
#ifndef WAP_WORKERS_H
#define WAP_WORKERS_H

struct wap_workers;

/* N threads (at least 1).  NULL on failure. */
struct wap_workers *wap_workers_new(int n);
/* Queue a job; 0, or -1 on allocation failure (then nothing is queued). */
int wap_workers_submit(struct wap_workers *w, void (*fn)(void *arg), void *arg);
/* Wait until every queued job has run, jobs they queued too (the threads
 * stay for more). */
void wap_workers_wait(struct wap_workers *w);
/* Run every queued job, then stop and join the threads, and free. */
void wap_workers_free(struct wap_workers *w);

#endif
