/* Typed params of an analysis run (nsys_aparams, analysis.h): every declared
 * param by its registry index, made from the declared defaults and set by
 * name. Parsing them from JSON is methods/analysis_params.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "common/util.h"

const nsys_aparam *nsys_aparams_decl(const nsys_aparams *ps, uint32_t i) {
  uint32_t own = 0;
  while (ps->a->params && ps->a->params[own].name) own++;
  return i < own ? &ps->a->params[i] : &nsys_analysis_common_params[i - own];
}

int nsys_aparams_index(const nsys_aparams *ps, const char *name) {
  for (uint32_t i = 0; name && i < ps->n; i++)
    if (!strcmp(nsys_aparams_decl(ps, i)->name, name)) return (int)i;
  return -1;
}

/* The value slot of a declared param of type t; aborts otherwise (a misspelt
 * name in the code must not read as a silent 0). */
static nsys_aval *nsys__slot(const nsys_aparams *ps, const char *name, int t) {
  int i = nsys_aparams_index(ps, name);
  if (i < 0 || (t >= 0 && nsys_aparams_decl(ps, (uint32_t)i)->type != (nsys_aparam_type)t)) {
    fprintf(stderr, "nsys-ai: analysis %s declares no param '%s' of that type\n", ps->a->name, name);
    abort();
  }
  return (nsys_aval *)&ps->v[i];
}

static void nsys__clear(nsys_aval *v) {
  free(v->str);
  memset(v, 0, sizeof *v);
}

/* Integer literal (optional sign, digits only) that fits int64. */
static bool nsys__int_text(const char *s, int64_t *out) {
  const char *d = s + (*s == '-' || *s == '+');
  if (!*d) return false;
  for (const char *q = d; *q; q++)
    if (*q < '0' || *q > '9') return false;
  char *end;
  long long x = strtoll(s, &end, 10);
  *out = x;
  return *end == '\0';
}

void nsys_aparams_defaults(nsys_aparams *ps, const nsys_analysis *a) {
  memset(ps, 0, sizeof *ps);
  ps->a = a;
  uint32_t n = 0;
  while (a->params && a->params[n].name) n++;
  for (const nsys_aparam *c = nsys_analysis_common_params; c->name; c++) n++;
  if (n > NSYS_APARAMS_MAX) abort(); /* raise NSYS_APARAMS_MAX */
  ps->n = n;
  for (uint32_t i = 0; i < n; i++) {
    const nsys_aparam *d = nsys_aparams_decl(ps, i);
    nsys_aval *v = &ps->v[i];
    if (!d->def) continue;
    v->set = true;
    switch (d->type) {
    case NSYS_AP_INT: nsys__int_text(d->def, &v->i); v->num = (double)v->i; break;
    case NSYS_AP_NUM:
      v->num = strtod(d->def, NULL);
      v->integral = nsys__int_text(d->def, &v->i);
      break;
    case NSYS_AP_STR: v->str = nsys_xstrdup(d->def); break;
    case NSYS_AP_BOOL: v->b = strcmp(d->def, "true") == 0; break;
    }
  }
}

void nsys_aparams_dispose(nsys_aparams *ps) {
  for (uint32_t i = 0; i < ps->n; i++) free(ps->v[i].str);
  memset(ps, 0, sizeof *ps);
}

void nsys_aparams_copy(nsys_aparams *dst, const nsys_aparams *src) {
  *dst = *src;
  for (uint32_t i = 0; i < src->n; i++)
    if (src->v[i].str) dst->v[i].str = nsys_xstrdup(src->v[i].str);
}

void nsys_aparams_set_null(nsys_aparams *ps, const char *name) { nsys__clear(nsys__slot(ps, name, -1)); }

void nsys_aparams_set_int(nsys_aparams *ps, const char *name, int64_t x) {
  nsys_aval *v = nsys__slot(ps, name, NSYS_AP_INT);
  nsys__clear(v);
  *v = (nsys_aval){.set = true, .i = x, .num = (double)x};
}

void nsys_aparams_set_num(nsys_aparams *ps, const char *name, double x) {
  nsys_aval *v = nsys__slot(ps, name, NSYS_AP_NUM);
  nsys__clear(v);
  *v = (nsys_aval){.set = true, .num = x};
}

void nsys_aparams_set_num_int(nsys_aparams *ps, const char *name, int64_t x) {
  nsys_aval *v = nsys__slot(ps, name, NSYS_AP_NUM);
  nsys__clear(v);
  *v = (nsys_aval){.set = true, .integral = true, .i = x, .num = (double)x};
}

void nsys_aparams_set_str(nsys_aparams *ps, const char *name, const char *x) {
  nsys_aval *v = nsys__slot(ps, name, NSYS_AP_STR);
  nsys__clear(v);
  *v = (nsys_aval){.set = true, .str = nsys_xstrdup(x)};
}

void nsys_aparams_set_bool(nsys_aparams *ps, const char *name, bool x) {
  nsys_aval *v = nsys__slot(ps, name, NSYS_AP_BOOL);
  nsys__clear(v);
  *v = (nsys_aval){.set = true, .b = x};
}

const nsys_aval *nsys_aparams_get(const nsys_aparams *ps, const char *name) { return nsys__slot(ps, name, -1); }
