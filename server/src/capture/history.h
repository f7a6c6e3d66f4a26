/* Run history: the workspace's record of captures, their specs and reports,
 * the user's notes and hypotheses, and before/after pairs, in
 * ROOT/.nsys-ai/runs.db (SQLite, WAL, busy timeout, one transaction per
 * write), never in a profile. Several processes may write at once (CLI runs,
 * the server); a run is committed before its capture starts, so a killed
 * process leaves it behind as "capturing" (listed as interrupted once its
 * process is gone). No JSON here: the spec's command, flags and environment
 * are texts the caller wrote. */
#ifndef NSYS_CAPTURE_HISTORY_H
#define NSYS_CAPTURE_HISTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/task.h"

typedef struct nsys_history nsys_history;

typedef struct nsys_run {
  int64_t id;
  char *name;          /* "r<id>" unless the caller named it; unique */
  int64_t created_ns;  /* UTC, ns since the epoch */
  char *status;        /* "capturing", "ok", "failed", "recorded" */
  int64_t pid;         /* process that recorded it */
  bool interrupted;    /* status "capturing" and that process is gone */
  char *command;       /* JSON array text, or NULL */
  char *nsys_flags;    /* JSON array text, or NULL */
  char *git_commit;    /* NULL when not a git workspace */
  int git_dirty;       /* 1, 0, -1 unknown */
  char *env;           /* JSON object text, or NULL */
  char *gpu;           /* GPU names, or NULL */
  char *report;        /* path of the SQLite export, or NULL */
  char *summary;       /* JSON text (doctor summary), or NULL */
  char *error;         /* why a capture failed, or NULL */
  int64_t before_id;   /* the run this one is the "after" of; 0 none */
  bool has_stats;      /* refine statistics below are known */
  double coverage, tagged_pct;
  int64_t tagged_ranges;
} nsys_run;

typedef struct nsys_run_note {
  int64_t id, run_id, created_ns;
  char *kind; /* "note", "hypothesis", "decision" */
  char *text;
} nsys_run_note;

/* Opens the history of `root`. create: makes .nsys-ai/ (0700, with a
 * .gitignore of "*": reports and the database stay out of the repository) and
 * the database when absent; otherwise an absent history fails with
 * NSYS_E_NOT_FOUND (readers never leave a folder behind). NULL after
 * nsys_task_fail (NSYS_E_IO, NSYS_E_NOT_FOUND). */
nsys_history *nsys_history_open(const char *root, bool create, nsys_task *t);
void nsys_history_close(nsys_history *h);
const char *nsys_history_dir(const nsys_history *h); /* ROOT/.nsys-ai (realpath of root) */

/* Adds a run from spec (id, name if NULL, created_ns, pid and interrupted are
 * filled in) in one transaction; *out gets the stored run. */
bool nsys_history_add(nsys_history *h, const nsys_run *spec, nsys_run *out, nsys_task *t);
/* nsys_history_add and, when text is not NULL, a note (kind, text) on the run
 * in the same transaction (a hypothesis is never lost to a killed writer). */
bool nsys_history_add_with_note(nsys_history *h, const nsys_run *spec, const char *kind, const char *text,
                                nsys_run *out, nsys_task *t);
/* Sets status, report, summary, error and gpu of run id (NULL leaves a field). */
bool nsys_history_finish(nsys_history *h, int64_t id, const char *status, const char *report,
                         const char *summary, const char *error, const char *gpu, nsys_task *t);
bool nsys_history_set_stats(nsys_history *h, int64_t id, double coverage, double tagged_pct,
                            int64_t tagged_ranges, nsys_task *t);
/* Newest first; limit <= 0: all. */
bool nsys_history_list(nsys_history *h, int64_t limit, nsys_run **out, int *n, nsys_task *t);
/* A run by name, by "#ID", or "latest" / "latest~K" (K runs with a report
 * before the newest one with a report). false with NSYS_E_NOT_FOUND. */
bool nsys_history_get(nsys_history *h, const char *ref, nsys_run *out, nsys_task *t);
bool nsys_history_get_id(nsys_history *h, int64_t id, nsys_run *out, nsys_task *t);
/* The newest run with a report recorded before `run`. false with NSYS_E_NOT_FOUND. */
bool nsys_history_previous(nsys_history *h, const nsys_run *run, nsys_run *out, nsys_task *t);
bool nsys_history_add_note(nsys_history *h, int64_t run_id, const char *kind, const char *text,
                           nsys_run_note *out, nsys_task *t);
bool nsys_history_notes(nsys_history *h, int64_t run_id, nsys_run_note **out, int *n, nsys_task *t);

void nsys_run_free(nsys_run *r);
void nsys_runs_free(nsys_run *r, int n); /* the elements and the array */
void nsys_run_note_free(nsys_run_note *n);
void nsys_run_notes_free(nsys_run_note *n, int count); /* the elements and the array */

#endif
