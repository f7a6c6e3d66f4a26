/* Internal interface between the loader's files (loader.c, schema.c,
 * strings.c, info.c, nsysrep.c). Not for other modules: use profile.h. */
#ifndef NSYS_LOADER_INTERNAL_H
#define NSYS_LOADER_INTERNAL_H

#include <stdbool.h>
#include <sys/stat.h>

#include "profile/profile.h"

/* schema.c: lists the tables, detects the generation, resolves the logical
 * tables and reads their columns. Fails with -32004 when the database holds
 * none of the tables an nsys export has. */
bool nsys_schema_load(nsys_profile *p, nsys_task *task);
void nsys_schema_free(nsys_schema *s);
/* True when `name` looks like a table only nsys exports create. */
bool nsys_schema_is_nsys_table(const char *name);

/* strings.c: loads StringIds (if present) into p->strings / p->sparse_*. */
bool nsys_strings_load(nsys_profile *p, nsys_task *task);
void nsys_strings_free(nsys_profile *p);

/* info.c: fills p->info. */
bool nsys_info_build(nsys_profile *p, nsys_task *task);
void nsys_info_free(nsys_info *info);

/* info.c: the summary computed on a worker thread beside the index build
 * (nsys_profile_open_begin). start: NULL when no thread could be started;
 * gpu_from_index: leaves the GPU tables to the index build (p->info_gpu).
 * finish: joins, moves the result into p->info (true) or records the error on
 * task (false; cancellation of the start task counts), frees the job, and
 * gives the job's time in *ns. discard: joins and drops it. */
nsys_info_job *nsys_info_job_start(nsys_profile *p, nsys_task *task, bool gpu_from_index);
bool nsys_info_job_finish(nsys_info_job *j, nsys_profile *p, nsys_task *task, int64_t *ns);
void nsys_info_job_discard(nsys_info_job *j);

/* info_cache.c: the summary saved in the cache directory, keyed by the file
 * identity (path, dev, inode, size, mtime). load: true when a valid entry
 * replaced p->info; false (p->info untouched) when absent, stale or corrupt.
 * NSYS_AI_NO_INFO_CACHE disables both. */
bool nsys_info_cache_load(nsys_profile *p);
void nsys_info_cache_save(const nsys_profile *p);

/* nsysrep.c: true for *.nsys-rep / *.qdrep paths. */
bool nsys_path_is_report(const char *path);
/* Converts a report into the cache (reused when already converted) and
 * returns the malloc'd path of the SQLite export, or NULL after recording
 * -32006 (no nsys), -32007 (export failed), -32012 (cache) or -32800. */
char *nsys_report_to_sqlite(const char *path, const struct stat *st, nsys_task *task);

/* loader.c: the same "SQLite format 3" check used for the user's file. */
bool nsys_file_has_sqlite_magic(const char *path);

/* SQL identifier quoting: writes "name" (with embedded quotes doubled). */
bool nsys_sql_quote_ident(const char *name, char *out, size_t cap);

#endif
