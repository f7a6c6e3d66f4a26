/* Running a capture: `nsys profile` with defaults for ML jobs, the
 * QdstrmImporter step when nsys leaves a .qdstrm (Debian's nsys does), and
 * `nsys export --type=sqlite`; plus the run spec's facts (git commit and
 * dirty state, an environment summary). No JSON here. */
#ifndef NSYS_CAPTURE_NSYS_CAPTURE_H
#define NSYS_CAPTURE_NSYS_CAPTURE_H

#include <stdbool.h>

#include "common/task.h"

typedef struct nsys_capture_spec {
  const char *root;        /* workspace: the program runs there */
  char *const *cmd;        /* the program and its arguments */
  int n_cmd;
  const char *trace;       /* NULL: "cuda,nvtx,osrt" */
  char *const *extra;      /* further nsys flags, verbatim */
  int n_extra;
} nsys_capture_spec;

/* A NULL-terminated list of strings (free with nsys_strv_free). */
typedef struct nsys_strv {
  char **v;
  int n;
} nsys_strv;
void nsys_strv_push(nsys_strv *s, const char *str);
void nsys_strv_free(nsys_strv *s);

/* The nsys profile flags for spec (without -o and the command): trace set,
 * no CPU sampling or context switches (nsys collects CUDA backtraces only
 * with CPU sampling on, so none by default), a cudaProfilerApi capture range when the program marks
 * one (its script calls cudaProfilerStart / torch.cuda.profiler.start), then
 * spec->extra. See docs/protocol.md, Capture. */
void nsys_capture_flags(const nsys_capture_spec *spec, nsys_strv *out);

/* Runs nsys profile with `flags` writing OUT_DIR/report.*, imports a .qdstrm
 * if nsys left one, exports OUT_DIR/report.sqlite. The program's and nsys's
 * output go to this process's stderr. *sqlite_out: the export's path. false
 * after nsys_task_fail: NSYS_E_NSYS_UNAVAILABLE (no nsys / importer) or
 * NSYS_E_EXPORT_FAILED (capture, import or export failed; the message says
 * which and how). */
bool nsys_capture_run(const char *nsys, const nsys_strv *flags, const nsys_capture_spec *spec, const char *out_dir,
                      char **sqlite_out, nsys_task *t);

/* The QdstrmImporter beside nsys's installation ($NSYS_AI_QDSTRM_IMPORTER
 * first), or NULL. */
char *nsys_capture_find_importer(const char *nsys);

/* git rev-parse HEAD and `git status --porcelain` of root: *commit NULL and
 * *dirty -1 when root is not in a git work tree (or git is absent). */
void nsys_capture_git(const char *root, char **commit, int *dirty);

/* The environment variables that change a GPU job's behaviour, as "K=V":
 * CUDA_*, NCCL_*, TORCH_*, PYTORCH_*, OMP_NUM_THREADS, WORLD_SIZE, RANK,
 * LOCAL_RANK, MASTER_ADDR, NVIDIA_*, in name order. */
void nsys_capture_env(nsys_strv *out);

#endif
