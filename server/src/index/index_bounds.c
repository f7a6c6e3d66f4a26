/* See index_bounds.h. */
#include "index/index_bounds.h"

#include "common/util.h"

bool nsys_durations_fold(const int64_t *start, const int64_t *end, size_t n, uint64_t *units) {
  const uint64_t lo = (uint64_t)NSYS_TIME_MIN, span = (uint64_t)NSYS_TIME_MAX - lo;
  const uint64_t round = ((uint64_t)1 << NSYS_UNIT_BITS) - 1;
  uint64_t bad = 0, sum = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t s = (uint64_t)start[i], e = (uint64_t)end[i], d = e - s;
    bad |= (uint64_t)(s - lo > span) | (uint64_t)(e - lo > span) | (uint64_t)(d > span);
    sum += (d + round) >> NSYS_UNIT_BITS; /* d <= 2^62: no wrap */
  }
  *units += sum;
  return !bad;
}

static const char *nsys__durations_broken(const int64_t *start, const int64_t *end, uint32_t n, const char *what) {
  uint64_t units = 0;
  for (uint32_t i = 0; i < n; i += NSYS_FOLD_MAX) {
    uint32_t k = n - i < NSYS_FOLD_MAX ? n - i : NSYS_FOLD_MAX;
    if (!nsys_durations_fold(start + i, end + i, k, &units)) return "times are outside +-2^61 ns or end before they start";
    if (units > NSYS_UNITS_MAX) return what;
  }
  return NULL;
}

const char *nsys_index_bounds_broken(const nsys_index *ix) {
  const char *why = nsys__durations_broken(ix->ops.start, ix->ops.end, ix->ops.n,
                                           "GPU op durations add up to more than 2^61 ns (73 years)");
  if (!why)
    why = nsys__durations_broken(ix->api.start, ix->api.end, ix->api.n,
                                 "CUDA API call durations add up to more than 2^61 ns (73 years)");
  if (!why)
    why = nsys__durations_broken(ix->nvtx.start, ix->nvtx.end, ix->nvtx.n,
                                 "NVTX range durations add up to more than 2^61 ns (73 years)");
  return why;
}
