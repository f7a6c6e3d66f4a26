/* Typed results (analysis/result.h) and their one converter
 * (methods/analysis_json.c): absent, null and set values, exact int64,
 * key order by declaration whatever the order of the writes, nested
 * records, arrays and lists, deep copies, and the record types of the
 * registry. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/result_defs.h"
#include "methods/analysis_json.h"
#include "rpc/json_write.h"
#include "../common/nsys_check.h"

/* A record type of the test: one column of each type. */
#define NSYS_RD_T_INNER(X) \
  X(TI_A, "a", i64, NULL) \
  X(TI_B, "b", str, NULL)
#define NSYS__REC nsys_rd_t_inner
NSYS_RDECL(NSYS_RD_T_INNER)
#undef NSYS__REC
#define NSYS_RD_T_REC(X) \
  X(T_I, "i", i64, NULL) \
  X(T_D, "d", f64, NULL) \
  X(T_S, "s", str, NULL) \
  X(T_B, "b", bool, NULL) \
  X(T_O, "o", obj, &nsys_rd_t_inner) \
  X(T_ANY, "any", obj, NULL) \
  X(T_ARR, "arr", arr, &nsys_rd_t_inner) \
  X(T_STRS, "strs", list, &nsys_rd_strlist) \
  X(T_NUMS, "nums", list, &nsys_rd_numlist) \
  X(T_LAST, "last", i64, NULL)
#define NSYS__REC nsys_rd_t_rec
NSYS_RDECL(NSYS_RD_T_REC)
#undef NSYS__REC
NSYS_RDEF(nsys_rd_t_inner, NSYS_RD_T_INNER)
NSYS_RDEF(nsys_rd_t_rec, NSYS_RD_T_REC)

static char *json_of(nsys_rec o) {
  cJSON *j = nsys_rrec_json(o);
  char *s = nsys_json_print(j, false);
  cJSON_Delete(j);
  return s;
}

static void test_values(void) {
  nsys_rec o = nsys_rrec_new(&nsys_rd_t_rec);
  /* written out of order: JSON follows the declaration; T_B never set: no key */
  nsys_rset_i64(o, T_LAST, -9007199254740993LL);
  nsys_rtab *strs = nsys_rset_list(o, T_STRS);
  nsys_rlist_str(strs, "x");
  nsys_rlist_str(strs, NULL);
  nsys_rtab *nums = nsys_rset_list(o, T_NUMS);
  nsys_rlist_f64(nums, 1.5);
  nsys_rlist_f64(nums, NAN);
  nsys_rtab *arr = nsys_rset_arr(o, T_ARR);
  nsys_rset_i64(nsys_rtab_add(arr), TI_A, 1);
  nsys_rset_str(nsys_rtab_add(arr), TI_B, "two");
  nsys_rec in = nsys_rset_obj(o, T_O);
  nsys_rset_i64(in, TI_A, 1779782331676752435LL);
  nsys_rset_str(o, T_S, NULL);
  nsys_rset_f64(o, T_D, INFINITY);
  nsys_rset_i64(o, T_I, 7);
  nsys_rset_i64(o, T_I, INT64_MAX); /* rewritten */
  nsys_rset_null(o, T_ANY);
  char *s = json_of(o);
  CHECK_STR(s, "{\"i\":9223372036854775807,\"d\":null,\"s\":null,\"o\":{\"a\":1779782331676752435},\"any\":null,"
               "\"arr\":[{\"a\":1},{\"b\":\"two\"}],\"strs\":[\"x\",null],\"nums\":[1.5,null],"
               "\"last\":-9007199254740993}");
  free(s);
  /* getters: the value, or 0 / NULL / false when absent or null */
  CHECK_EQ(nsys_rget_i64(o, T_I), INT64_MAX);
  CHECK_EQ(nsys_rget_i64(nsys_rget_obj(o, T_O), TI_A), 1779782331676752435LL);
  CHECK(nsys_rget_f64(o, T_D) == 0 && !nsys_rhas(o, T_D));
  CHECK(nsys_rget_str(o, T_S) == NULL && !nsys_rhas(o, T_S));
  CHECK(!nsys_rget_bool(o, T_B) && !nsys_rhas(o, T_B));
  CHECK(nsys_rhas(o, T_I) && nsys_rhas(o, T_ARR));
  CHECK_EQ(nsys_rtab_len(nsys_rget_arr(o, T_ARR)), 2);
  CHECK_EQ(nsys_rtab_len(nsys_rget_list(o, T_STRS)), 2);
  CHECK(nsys_rget_obj(o, T_ANY).t == NULL);
  /* the empty record reads as nothing, and converts to {} */
  nsys_rec none = {NULL, 0};
  CHECK(nsys_rget_i64(nsys_rget_obj(none, T_O), TI_A) == 0 && nsys_rget_str(none, T_S) == NULL);
  CHECK(nsys_rget_arr(none, T_ARR) == NULL && nsys_rtab_row(NULL, 0).t == NULL);
  s = json_of(none);
  CHECK_STR(s, "{}");
  free(s);

  /* a record of any type in an untyped obj column, and deep copies */
  nsys_rec any = nsys_rset_obj_as(o, T_ANY, &nsys_rd_t_inner);
  nsys_rset_str(any, TI_B, "any");
  nsys_rec cp = nsys_rrec_copy(o);
  nsys_rtab *more = nsys_rtab_new(&nsys_rd_t_rec);
  nsys_rtab_add_copy(more, o);
  char *want = json_of(o);
  nsys_rtab_free(o.t); /* the copies own their values */
  s = json_of(cp);
  CHECK_STR(s, want);
  free(s);
  s = json_of(nsys_rtab_row(more, 0));
  CHECK_STR(s, want);
  free(s);
  CHECK(strstr(want, "\"any\":{\"b\":\"any\"}") != NULL);
  free(want);
  nsys_rec holder = nsys_rrec_new(&nsys_rd_t_rec);
  nsys_rset_obj_copy(holder, T_O, nsys_rget_obj(cp, T_O));
  nsys_rset_obj_copy(holder, T_ANY, none); /* an empty source: null */
  s = json_of(holder);
  CHECK_STR(s, "{\"o\":{\"a\":1779782331676752435},\"any\":null}");
  free(s);
  nsys_rtab_free(holder.t);
  nsys_rtab_free(cp.t);
  nsys_rtab_free(more);
}

/* Every analysis declares its record types; no record type repeats a key
 * (but the small-kernel evidence's two windows, one of which is ever set),
 * and each nested column names its record type (but a finding's evidence). */
static void check_def(const nsys_rdef *d, int depth) {
  if (!d || depth > 4) return;
  for (uint16_t i = 0; i < d->n; i++) {
    for (uint16_t j = 0; j < i; j++)
      if (!strcmp(d->cols[i].key, d->cols[j].key))
        CHECK_MSG(d == &nsys_rd_ev_small && !strcmp(d->cols[i].key, "window"), "%s: key %s twice", d->name,
                  d->cols[i].key);
    if (d->cols[i].type >= NSYS_RT_obj) {
      CHECK_MSG(d->cols[i].sub || (d == &nsys_rd_finding && !strcmp(d->cols[i].key, "evidence")),
                "%s.%s: nested column without a record type", d->name, d->cols[i].key);
      if (d->cols[i].sub != d) check_def(d->cols[i].sub, depth + 1);
    }
    if (d->cols[i].type == NSYS_RT_list) CHECK(d->cols[i].sub->n == 1 && d->cols[i].sub->cols[0].type < NSYS_RT_obj);
  }
}

static void test_registry_defs(void) {
  for (const nsys_analysis *a = nsys_analyses; a->name; a++) {
    CHECK_MSG(a->row && a->summary, "%s: no record types", a->name);
    check_def(a->row, 0);
    check_def(a->summary, 0);
  }
  check_def(&nsys_rd_report, 0);
  const nsys_rdef *ev[] = {&nsys_rd_ev_short0, &nsys_rd_ev_short, &nsys_rd_ev_bubbles, &nsys_rd_ev_launch,
                           &nsys_rd_ev_nccl, &nsys_rd_ev_pageable, &nsys_rd_ev_h2d, &nsys_rd_ev_small,
                           &nsys_rd_ev_hotspot, &nsys_rd_ev_nvtx, &nsys_rd_ev_sync, &nsys_rd_ev_iters};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(ev); i++) check_def(ev[i], 0);
  /* gaps.c and overlap.c name causes and stream classes by these columns' keys */
  CHECK_STR(nsys_rd_gap_causes.cols[nsys_rd_gap_causes.n - 1].key, "cpu_stall");
  CHECK_STR(nsys_rd_sc_sum.cols[NSYS_STREAM_MIXED].key, "mixed");
}

int main(void) {
  test_values();
  test_registry_defs();
  return nsys_check_done("result");
}
