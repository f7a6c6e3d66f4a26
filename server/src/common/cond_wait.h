/* Timed waits on a condition variable, for a request waiting on another
 * thread's work (a build another request started, a statement's end) while
 * still noticing its own cancellation. */
#ifndef NSYS_COND_WAIT_H
#define NSYS_COND_WAIT_H

#include <pthread.h>
#include <stdbool.h>

#include "common/task.h"

/* Waits on cv (mu held) for at most ms milliseconds, or until signalled. */
void nsys_cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, long ms);

/* One turn of a loop waiting, mu held, for a condition another thread
 * publishes under mu: false at once when task is cancelled (mu still held;
 * the caller unlocks and fails), else waits as nsys_cond_wait_ms and returns
 * true (the caller checks its condition again). */
bool nsys_task_wait_turn(nsys_task *task, pthread_cond_t *cv, pthread_mutex_t *mu, long ms);

#endif
