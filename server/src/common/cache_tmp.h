/* Temporary files of the cache directory: a cache file is written to a
 * unique temporary name beside it, then renamed over it. A process killed
 * while writing leaves its temporary behind (an index cache of a 10M-kernel
 * profile is ~0.5 GB), so each new temporary first removes those of
 * processes that are gone. */
#ifndef NSYS_COMMON_CACHE_TMP_H
#define NSYS_COMMON_CACHE_TMP_H

/* "<path>.tmp.<pid>.<ns>", malloc'd; before returning it, removes every
 * "*.tmp.<pid>.<ns>" file in path's directory whose process no longer exists. */
char *nsys_cache_tmp_name(const char *path);

/* Removes the temporaries of processes that are gone from dir; returns how
 * many were removed. */
int nsys_cache_sweep_tmp(const char *dir);

#endif
