/* Typed records and tables (analysis/result.h). */
#include "analysis/result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

nsys_rtab *nsys_rtab_new(const nsys_rdef *def) {
  nsys_rtab *t = nsys_xcalloc(1, sizeof *t);
  t->def = def;
  return t;
}

void nsys_rtab_free(nsys_rtab *t) {
  if (!t) return;
  const nsys_rdef *d = t->def;
  for (uint32_t r = 0; r < t->n; r++)
    for (uint16_t i = 0; i < d->n; i++) {
      nsys_rval *v = &t->v[(size_t)r * d->n + i];
      if (v->st != NSYS_RV_SET) continue;
      if (d->cols[i].type == NSYS_RT_str) free(v->u.s);
      else if (d->cols[i].type >= NSYS_RT_obj) nsys_rtab_free(v->u.t);
    }
  free(t->v);
  free(t);
}

nsys_rec nsys_rtab_add(nsys_rtab *t) {
  size_t w = t->def->n;
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 4;
    t->v = nsys_xrealloc(t->v, (size_t)t->cap * w * sizeof *t->v);
  }
  memset(t->v + (size_t)t->n * w, 0, w * sizeof *t->v);
  return (nsys_rec){t, t->n++};
}

nsys_rec nsys_rtab_row(const nsys_rtab *t, uint32_t r) {
  if (!t || r >= t->n) return (nsys_rec){NULL, 0};
  return (nsys_rec){(nsys_rtab *)t, r};
}

nsys_rec nsys_rrec_new(const nsys_rdef *def) { return nsys_rtab_add(nsys_rtab_new(def)); }

static nsys_rtab *nsys__rtab_copy(const nsys_rtab *src, uint32_t from, uint32_t to);

static nsys_rec nsys__rrow_copy(nsys_rtab *dst, const nsys_rtab *src, uint32_t r) {
  const nsys_rdef *d = src->def;
  if (dst->def != d) abort();
  nsys_rec o = nsys_rtab_add(dst);
  for (uint16_t i = 0; i < d->n; i++) {
    const nsys_rval *s = &src->v[(size_t)r * d->n + i];
    nsys_rval *v = &dst->v[(size_t)o.r * d->n + i];
    *v = *s;
    if (s->st != NSYS_RV_SET) continue;
    if (d->cols[i].type == NSYS_RT_str) v->u.s = nsys_xstrdup(s->u.s);
    else if (d->cols[i].type >= NSYS_RT_obj) v->u.t = nsys__rtab_copy(s->u.t, 0, s->u.t->n);
  }
  return o;
}

static nsys_rtab *nsys__rtab_copy(const nsys_rtab *src, uint32_t from, uint32_t to) {
  nsys_rtab *t = nsys_rtab_new(src->def);
  for (uint32_t r = from; r < to; r++) nsys__rrow_copy(t, src, r);
  return t;
}

nsys_rec nsys_rtab_add_copy(nsys_rtab *t, nsys_rec src) { return nsys__rrow_copy(t, src.t, src.r); }

nsys_rec nsys_rrec_copy(nsys_rec src) {
  if (!src.t) return src;
  return (nsys_rec){nsys__rtab_copy(src.t, src.r, src.r + 1), 0};
}

const nsys_rval *nsys_rrec_val(nsys_rec o, uint16_t i) {
  static const nsys_rval absent = {0};
  if (!o.t || i >= o.t->def->n) return &absent;
  return &o.t->v[(size_t)o.r * o.t->def->n + i];
}

/* The value of column i of o's record type, checked against the handle. */
static nsys_rval *nsys__slot(nsys_rec o, const nsys_rdef *def, uint16_t i, nsys_rtype want) {
  if (!o.t) return NULL;
  if (o.t->def != def || i >= def->n || def->cols[i].type != want) {
    fprintf(stderr, "nsys-ai: column %u of %s used on a record of %s\n", (unsigned)i, def->name, o.t->def->name);
    abort();
  }
  return &o.t->v[(size_t)o.r * def->n + i];
}

/* A slot to write: the old value released. */
static nsys_rval *nsys__wslot(nsys_rec o, const nsys_rdef *def, uint16_t i, nsys_rtype want) {
  nsys_rval *v = nsys__slot(o, def, i, want);
  if (!v) abort(); /* writing to the empty record */
  if (v->st == NSYS_RV_SET) {
    if (want == NSYS_RT_str) free(v->u.s);
    else if (want >= NSYS_RT_obj) nsys_rtab_free(v->u.t);
  }
  v->st = NSYS_RV_SET;
  return v;
}

void nsys__rset_null(nsys_rec o, const nsys_rdef *def, uint16_t i) {
  nsys_rval *v = nsys__wslot(o, def, i, def->cols[i < def->n ? i : 0].type);
  v->st = NSYS_RV_NULL;
}
void nsys_rset_i64(nsys_rec o, nsys_c_i64 c, int64_t x) { nsys__wslot(o, c.def, c.i, NSYS_RT_i64)->u.i = x; }
void nsys_rset_f64(nsys_rec o, nsys_c_f64 c, double x) {
  nsys_rval *v = nsys__wslot(o, c.def, c.i, NSYS_RT_f64);
  if (isfinite(x)) v->u.d = x;
  else v->st = NSYS_RV_NULL;
}
void nsys_rset_str(nsys_rec o, nsys_c_str c, const char *x) {
  nsys_rval *v = nsys__wslot(o, c.def, c.i, NSYS_RT_str);
  if (x) v->u.s = nsys_xstrdup(x);
  else v->st = NSYS_RV_NULL;
}
void nsys_rset_bool(nsys_rec o, nsys_c_bool c, bool x) { nsys__wslot(o, c.def, c.i, NSYS_RT_bool)->u.b = x; }
nsys_rec nsys_rset_obj_as(nsys_rec o, nsys_c_obj c, const nsys_rdef *def) {
  const nsys_rdef *sub = c.def->cols[c.i].sub;
  if (sub && sub != def) abort();
  nsys_rval *v = nsys__wslot(o, c.def, c.i, NSYS_RT_obj);
  v->u.t = nsys_rtab_new(def);
  return nsys_rtab_add(v->u.t);
}
nsys_rec nsys_rset_obj(nsys_rec o, nsys_c_obj c) {
  if (!c.def->cols[c.i].sub) abort(); /* of any type: nsys_rset_obj_as */
  return nsys_rset_obj_as(o, c, c.def->cols[c.i].sub);
}
void nsys_rset_obj_copy(nsys_rec o, nsys_c_obj c, nsys_rec src) {
  if (!src.t) {
    nsys_rset_null(o, c);
    return;
  }
  if (c.def->cols[c.i].sub && src.t->def != c.def->cols[c.i].sub) abort();
  nsys_rval *v = nsys__wslot(o, c.def, c.i, NSYS_RT_obj);
  v->u.t = nsys__rtab_copy(src.t, src.r, src.r + 1);
}
nsys_rtab *nsys_rset_arr(nsys_rec o, nsys_c_arr c) {
  nsys_rval *v = nsys__wslot(o, c.def, c.i, NSYS_RT_arr);
  return v->u.t = nsys_rtab_new(c.def->cols[c.i].sub);
}
nsys_rtab *nsys_rset_list(nsys_rec o, nsys_c_list c) {
  nsys_rval *v = nsys__wslot(o, c.def, c.i, NSYS_RT_list);
  return v->u.t = nsys_rtab_new(c.def->cols[c.i].sub);
}

static nsys_rval *nsys__list_add(nsys_rtab *l, nsys_rtype want) {
  if (l->def->n != 1 || l->def->cols[0].type != want) abort();
  nsys_rec o = nsys_rtab_add(l);
  nsys_rval *v = &l->v[o.r];
  v->st = NSYS_RV_SET;
  return v;
}
void nsys_rlist_str(nsys_rtab *l, const char *x) {
  nsys_rval *v = nsys__list_add(l, NSYS_RT_str);
  if (x) v->u.s = nsys_xstrdup(x);
  else v->st = NSYS_RV_NULL;
}
void nsys_rlist_f64(nsys_rtab *l, double x) {
  nsys_rval *v = nsys__list_add(l, NSYS_RT_f64);
  if (isfinite(x)) v->u.d = x;
  else v->st = NSYS_RV_NULL;
}

static const nsys_rval *nsys__rslot(nsys_rec o, const nsys_rdef *def, uint16_t i, nsys_rtype want) {
  const nsys_rval *v = nsys__slot(o, def, i, want);
  return v && v->st == NSYS_RV_SET ? v : NULL;
}
bool nsys__rhas(nsys_rec o, const nsys_rdef *def, uint16_t i) {
  return nsys__rslot(o, def, i, def->cols[i < def->n ? i : 0].type) != NULL;
}
int64_t nsys_rget_i64(nsys_rec o, nsys_c_i64 c) {
  const nsys_rval *v = nsys__rslot(o, c.def, c.i, NSYS_RT_i64);
  return v ? v->u.i : 0;
}
double nsys_rget_f64(nsys_rec o, nsys_c_f64 c) {
  const nsys_rval *v = nsys__rslot(o, c.def, c.i, NSYS_RT_f64);
  return v ? v->u.d : 0;
}
const char *nsys_rget_str(nsys_rec o, nsys_c_str c) {
  const nsys_rval *v = nsys__rslot(o, c.def, c.i, NSYS_RT_str);
  return v ? v->u.s : NULL;
}
bool nsys_rget_bool(nsys_rec o, nsys_c_bool c) {
  const nsys_rval *v = nsys__rslot(o, c.def, c.i, NSYS_RT_bool);
  return v ? v->u.b : false;
}
nsys_rec nsys_rget_obj(nsys_rec o, nsys_c_obj c) {
  const nsys_rval *v = nsys__rslot(o, c.def, c.i, NSYS_RT_obj);
  return v ? nsys_rtab_row(v->u.t, 0) : (nsys_rec){NULL, 0};
}
const nsys_rtab *nsys_rget_arr(nsys_rec o, nsys_c_arr c) {
  const nsys_rval *v = nsys__rslot(o, c.def, c.i, NSYS_RT_arr);
  return v ? v->u.t : NULL;
}
const nsys_rtab *nsys_rget_list(nsys_rec o, nsys_c_list c) {
  const nsys_rval *v = nsys__rslot(o, c.def, c.i, NSYS_RT_list);
  return v ? v->u.t : NULL;
}
