#include "common/cond_wait.h"

#include <time.h>

void nsys_cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, long ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += ms / 1000;
  until.tv_nsec += (ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_cond_timedwait(cv, mu, &until);
}

bool nsys_task_wait_turn(nsys_task *task, pthread_cond_t *cv, pthread_mutex_t *mu, long ms) {
  if (nsys_task_cancelled(task)) return false;
  nsys_cond_wait_ms(cv, mu, ms);
  return true;
}
