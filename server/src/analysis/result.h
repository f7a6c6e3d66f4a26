/* Typed results of the analyses and the report: records and tables whose
 * columns are declared once (analysis/result_defs.h), read and written
 * through typed column handles, converted to JSON by one converter in
 * methods/ (methods/analysis_json.c).
 *
 * A record type (nsys_rdef) is an ordered list of columns: JSON key, type,
 * and for nested columns the record type of what they hold. Column order is
 * key order in JSON. A table (nsys_rtab) holds rows of one record type; a
 * record (nsys_rec) is one row of a table (a summary is a table of one row).
 * Each column has a handle constant of its own C type (nsys_c_i64,
 * nsys_c_f64, ...) naming its record type and position, so a renamed or
 * retyped column is a compile error for every reader and writer, and a
 * handle of another record type aborts (a programming error).
 *
 * A value is absent (never set: no key in JSON), null, or set. Integers are
 * int64 and stay exact through the converter; doubles that are not finite
 * are stored as null (as JSON has no NaN). Getters answer 0 / NULL / false
 * for absent and null values and on the empty record {NULL, 0}. */
#ifndef NSYS_ANALYSIS_RESULT_H
#define NSYS_ANALYSIS_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util.h"

typedef enum {
  NSYS_RT_i64,
  NSYS_RT_f64,
  NSYS_RT_str,
  NSYS_RT_bool,
  NSYS_RT_obj,  /* a nested record (of `sub`; sub NULL: of any record type, set with nsys_rset_obj_as) */
  NSYS_RT_arr,  /* an array of records (of `sub`) */
  NSYS_RT_list, /* an array of scalars: rows of `sub`, a record type of one column, written bare */
} nsys_rtype;

typedef struct nsys_rdef nsys_rdef;
typedef struct nsys_rcol {
  const char *key;
  nsys_rtype type;
  const nsys_rdef *sub;
} nsys_rcol;
struct nsys_rdef {
  const char *name;
  const nsys_rcol *cols;
  uint16_t n;
};

/* Column handles, one C type per column type. */
typedef struct { const nsys_rdef *def; uint16_t i; } nsys_c_i64;
typedef struct { const nsys_rdef *def; uint16_t i; } nsys_c_f64;
typedef struct { const nsys_rdef *def; uint16_t i; } nsys_c_str;
typedef struct { const nsys_rdef *def; uint16_t i; } nsys_c_bool;
typedef struct { const nsys_rdef *def; uint16_t i; } nsys_c_obj;
typedef struct { const nsys_rdef *def; uint16_t i; } nsys_c_arr;
typedef struct { const nsys_rdef *def; uint16_t i; } nsys_c_list;

typedef enum { NSYS_RV_ABSENT = 0, NSYS_RV_NULL, NSYS_RV_SET } nsys_rstate;
typedef struct nsys_rtab nsys_rtab;
typedef struct nsys_rval {
  uint8_t st; /* nsys_rstate */
  union {
    int64_t i;
    double d;
    char *s;
    bool b;
    nsys_rtab *t; /* obj (one row), arr, list */
  } u;
} nsys_rval;
struct nsys_rtab {
  const nsys_rdef *def;
  uint32_t n, cap; /* rows */
  nsys_rval *v;    /* n * def->n values, row-major */
};
typedef struct nsys_rec {
  nsys_rtab *t; /* NULL: the empty record */
  uint32_t r;
} nsys_rec;

/* Declaring record types: LIST(X) calls X(ID, "key", type, sub) once per
 * column (type: i64 f64 str bool obj arr list; sub: &nsys_rd_<name> of the
 * nested record type, or NULL). In a header, with NSYS__REC defined as the
 * record type's name:
 *   #define NSYS__REC nsys_rd_topk_row
 *   NSYS_RDECL(NSYS_TOPK_ROW)
 *   #undef NSYS__REC
 * declares nsys_rd_topk_row and a handle constant per column; in one .c,
 * NSYS_RDEF(nsys_rd_topk_row, NSYS_TOPK_ROW) defines it. */
#define NSYS__RENUM(id, key, T, sub) id##__i,
#define NSYS__RHANDLE(id, key, T, sub) static const nsys_c_##T id = {&NSYS__REC, id##__i};
#define NSYS__RCOL(id, key, T, sub) {key, NSYS_RT_##T, sub},
#define NSYS_RDECL(LIST)                \
  extern const nsys_rdef NSYS__REC;     \
  enum { LIST(NSYS__RENUM) };           \
  LIST(NSYS__RHANDLE)
#define NSYS_RDEF(rec, LIST)                                  \
  static const nsys_rcol rec##__cols[] = {LIST(NSYS__RCOL)}; \
  const nsys_rdef rec = {#rec, rec##__cols, (uint16_t)NSYS_ARRAY_LEN(rec##__cols)};

/* The handle of column i of def, for a loop over columns declared in the
 * order of a C array (checked when used, like every handle). */
static inline nsys_c_i64 nsys_rcol_i64(const nsys_rdef *def, int i) { return (nsys_c_i64){def, (uint16_t)i}; }

/* Tables and records. */
nsys_rtab *nsys_rtab_new(const nsys_rdef *def);
void nsys_rtab_free(nsys_rtab *t);
/* A new row, every value absent. */
nsys_rec nsys_rtab_add(nsys_rtab *t);
nsys_rec nsys_rtab_row(const nsys_rtab *t, uint32_t r);
static inline uint32_t nsys_rtab_len(const nsys_rtab *t) { return t ? t->n : 0; }
/* A new table of one row (a summary, an evidence object). */
nsys_rec nsys_rrec_new(const nsys_rdef *def);
/* Appends a deep copy of src (a record of t's type) to t. */
nsys_rec nsys_rtab_add_copy(nsys_rtab *t, nsys_rec src);
/* A deep copy of a record into a new table of one row. */
nsys_rec nsys_rrec_copy(nsys_rec src);
static inline bool nsys_rrec_ok(nsys_rec o) { return o.t != NULL; }
/* Value i of a record (generic readers: the converter, tests). */
const nsys_rval *nsys_rrec_val(nsys_rec o, uint16_t i);

/* Setters (the column must belong to o's record type). */
void nsys__rset_null(nsys_rec o, const nsys_rdef *def, uint16_t i);
#define nsys_rset_null(o, c) nsys__rset_null((o), (c).def, (c).i)
void nsys_rset_i64(nsys_rec o, nsys_c_i64 c, int64_t v);
void nsys_rset_f64(nsys_rec o, nsys_c_f64 c, double v);     /* not finite: null */
void nsys_rset_str(nsys_rec o, nsys_c_str c, const char *v); /* copied; NULL: null */
void nsys_rset_bool(nsys_rec o, nsys_c_bool c, bool v);
nsys_rec nsys_rset_obj(nsys_rec o, nsys_c_obj c);            /* a new nested record */
nsys_rec nsys_rset_obj_as(nsys_rec o, nsys_c_obj c, const nsys_rdef *def); /* the same, of def */
void nsys_rset_obj_copy(nsys_rec o, nsys_c_obj c, nsys_rec src); /* a copy of src; empty src: null */
nsys_rtab *nsys_rset_arr(nsys_rec o, nsys_c_arr c);          /* a new, empty nested table */
nsys_rtab *nsys_rset_list(nsys_rec o, nsys_c_list c);
/* Appends to a list (its record type's one column must have that type). */
void nsys_rlist_str(nsys_rtab *l, const char *v);
void nsys_rlist_f64(nsys_rtab *l, double v);

/* Getters: 0 / NULL / false / the empty record when absent or null. */
bool nsys__rhas(nsys_rec o, const nsys_rdef *def, uint16_t i);
#define nsys_rhas(o, c) nsys__rhas((o), (c).def, (c).i) /* set (not absent, not null) */
int64_t nsys_rget_i64(nsys_rec o, nsys_c_i64 c);
double nsys_rget_f64(nsys_rec o, nsys_c_f64 c);
const char *nsys_rget_str(nsys_rec o, nsys_c_str c);
bool nsys_rget_bool(nsys_rec o, nsys_c_bool c);
nsys_rec nsys_rget_obj(nsys_rec o, nsys_c_obj c);
const nsys_rtab *nsys_rget_arr(nsys_rec o, nsys_c_arr c);
const nsys_rtab *nsys_rget_list(nsys_rec o, nsys_c_list c);

#endif
