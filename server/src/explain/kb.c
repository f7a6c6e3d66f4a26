/* Knowledge-base loading and matching (see kb.h). */
#include "explain/kb.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "explain/context.h"
#include "explain/kb_embedded.h"

void nsys_kb_init(nsys_kb *kb) {
  memset(kb, 0, sizeof *kb);
  snprintf(kb->source, sizeof kb->source, "empty");
}

static void nsys__pattern_free(nsys_kb_pattern *p) {
  free(p->id);
  free(p->family);
  free(p->match);
  free(p->origin);
  free(p->category);
  free(p->bound);
  free(p->title);
  free(p->description);
  for (int i = 0; i < p->n_suggestions; i++) {
    free(p->suggestions[i]);
    if (p->suggestion_frameworks) free(p->suggestion_frameworks[i]);
  }
  free(p->suggestions);
  free(p->suggestion_frameworks);
  free(p->suggestion_min_cc);
  for (int i = 0; i < p->n_examples; i++) free(p->examples[i]);
  free(p->examples);
  if (p->has_re) regfree(&p->re);
}

void nsys_kb_free(nsys_kb *kb) {
  for (int i = 0; i < kb->n; i++) nsys__pattern_free(&kb->pats[i]);
  free(kb->pats);
  memset(kb, 0, sizeof *kb);
}

static char *nsys__str(const cJSON *obj, const cJSON *defaults, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsString(v) && defaults) v = cJSON_GetObjectItemCaseSensitive(defaults, key);
  return cJSON_IsString(v) && v->valuestring[0] ? nsys_xstrdup(v->valuestring) : NULL;
}

static char **nsys__strs(const cJSON *obj, const cJSON *defaults, const char *key, int *n) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsArray(arr) && defaults) arr = cJSON_GetObjectItemCaseSensitive(defaults, key);
  *n = 0;
  if (!cJSON_IsArray(arr)) return NULL;
  int cnt = cJSON_GetArraySize(arr);
  char **out = nsys_xcalloc((size_t)cnt + 1, sizeof *out);
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) {
    if (cJSON_IsString(it)) out[(*n)++] = nsys_xstrdup(it->valuestring);
  }
  return out;
}

/* Suggestions: strings, or {"text", "frameworks": [names], "minCc": int}.
 * False with a message for a malformed entry or an unknown framework name. */
static bool nsys__suggestions(const cJSON *obj, const cJSON *defaults, nsys_kb_pattern *p, char *why, size_t cap) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, "suggestions");
  if (!cJSON_IsArray(arr) && defaults) arr = cJSON_GetObjectItemCaseSensitive(defaults, "suggestions");
  p->n_suggestions = 0;
  if (!cJSON_IsArray(arr)) return true;
  int cnt = cJSON_GetArraySize(arr);
  p->suggestions = nsys_xcalloc((size_t)cnt + 1, sizeof *p->suggestions);
  p->suggestion_frameworks = nsys_xcalloc((size_t)cnt + 1, sizeof *p->suggestion_frameworks);
  p->suggestion_min_cc = nsys_xcalloc((size_t)cnt + 1, sizeof *p->suggestion_min_cc);
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) {
    int i = p->n_suggestions;
    if (cJSON_IsString(it)) {
      p->suggestions[p->n_suggestions++] = nsys_xstrdup(it->valuestring);
      continue;
    }
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(it, "text");
    if (!cJSON_IsObject(it) || !cJSON_IsString(text)) {
      snprintf(why, cap, "suggestions[%d]: expected a string or an object with \"text\"", i);
      return false;
    }
    p->suggestions[p->n_suggestions++] = nsys_xstrdup(text->valuestring);
    const cJSON *fw = cJSON_GetObjectItemCaseSensitive(it, "frameworks");
    if (fw) {
      nsys_strbuf b;
      nsys_strbuf_init(&b);
      const cJSON *f;
      cJSON_ArrayForEach(f, fw) {
        bool known = false;
        for (int k = 0; cJSON_IsString(f) && k < NSYS_FW_COUNT; k++)
          known |= strcmp(f->valuestring, nsys_framework_name((nsys_framework)k)) == 0;
        if (!known) {
          nsys_strbuf_free(&b);
          snprintf(why, cap, "suggestions[%d].frameworks: unknown framework", i);
          return false;
        }
        nsys_strbuf_printf(&b, "%s%s", b.len ? "," : "", f->valuestring);
      }
      p->suggestion_frameworks[i] = nsys_strbuf_steal(&b);
    }
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(it, "minCc");
    if (cc) {
      if (!cJSON_IsNumber(cc) || cc->valueint < 30 || cc->valueint > 150) {
        snprintf(why, cap, "suggestions[%d].minCc: expected a compute capability x10 (30..150)", i);
        return false;
      }
      p->suggestion_min_cc[i] = cc->valueint;
    }
  }
  return true;
}

bool nsys_kb_add_json(nsys_kb *kb, const char *text, size_t len, const char *file, char *err, size_t errcap) {
  cJSON *doc = cJSON_ParseWithLength(text, len);
  if (!doc) {
    snprintf(err, errcap, "%s: not valid JSON", file);
    return false;
  }
  const cJSON *pats = cJSON_GetObjectItemCaseSensitive(doc, "patterns");
  const cJSON *defaults = cJSON_GetObjectItemCaseSensitive(doc, "defaults");
  const cJSON *family = cJSON_GetObjectItemCaseSensitive(doc, "family");
  if (!cJSON_IsArray(pats)) {
    snprintf(err, errcap, "%s: expected an object with a 'patterns' array", file);
    cJSON_Delete(doc);
    return false;
  }
  static const struct {
    const char *key;
    nsys_kb_kind kind;
  } kinds[] = {{"exact", NSYS_KB_EXACT},
               {"prefix", NSYS_KB_PREFIX},
               {"contains", NSYS_KB_CONTAINS},
               {"glob", NSYS_KB_GLOB},
               {"regex", NSYS_KB_REGEX}};
  int idx = 0;
  const cJSON *pj;
  cJSON_ArrayForEach(pj, pats) {
    nsys_kb_pattern p;
    memset(&p, 0, sizeof p);
    p.id = nsys__str(pj, NULL, "id");
    int nkinds = 0;
    for (size_t k = 0; k < NSYS_ARRAY_LEN(kinds); k++) {
      const cJSON *m = cJSON_GetObjectItemCaseSensitive(pj, kinds[k].key);
      if (cJSON_IsString(m) && m->valuestring[0]) {
        nkinds++;
        p.kind = kinds[k].kind;
        free(p.match);
        p.match = nsys_xstrdup(m->valuestring);
      }
    }
    p.origin = nsys__str(pj, defaults, "origin");
    p.category = nsys__str(pj, defaults, "category");
    p.bound = nsys__str(pj, defaults, "bound");
    p.description = nsys__str(pj, defaults, "description");
    p.title = nsys__str(pj, NULL, "title");
    p.family = cJSON_IsString(family) ? nsys_xstrdup(family->valuestring) : nsys_xstrdup(file);
    if (!p.id || nkinds != 1 || !p.origin || !p.category || !p.bound || !p.description) {
      snprintf(err, errcap, "%s: patterns[%d] (%s): needs id, exactly one matcher, origin, category, bound, description",
               file, idx, p.id ? p.id : "?");
      nsys__pattern_free(&p);
      cJSON_Delete(doc);
      return false;
    }
    p.match_len = strlen(p.match);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(pj, "field");
    if (cJSON_IsString(f)) {
      if (strcmp(f->valuestring, "short") == 0) p.field = NSYS_KB_FIELD_SHORT;
      else if (strcmp(f->valuestring, "full") == 0) p.field = NSYS_KB_FIELD_FULL;
    }
    p.icase = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pj, "icase"));
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(pj, "priority");
    if (cJSON_IsNumber(pr)) p.priority = pr->valueint;
    char why[160];
    if (!nsys__suggestions(pj, defaults, &p, why, sizeof why)) {
      snprintf(err, errcap, "%s: patterns[%d] (%s): %s", file, idx, p.id ? p.id : "?", why);
      nsys__pattern_free(&p);
      cJSON_Delete(doc);
      return false;
    }
    p.examples = nsys__strs(pj, NULL, "examples", &p.n_examples);
    if (p.kind == NSYS_KB_REGEX) {
      int rc = regcomp(&p.re, p.match, REG_EXTENDED | REG_NOSUB | (p.icase ? REG_ICASE : 0));
      if (rc != 0) {
        char msg[128];
        regerror(rc, &p.re, msg, sizeof msg);
        snprintf(err, errcap, "%s: patterns[%d] (%s): bad regex: %s", file, idx, p.id, msg);
        nsys__pattern_free(&p);
        cJSON_Delete(doc);
        return false;
      }
      p.has_re = true;
    }
    if (kb->n == kb->cap) {
      kb->cap = kb->cap ? kb->cap * 2 : 64;
      kb->pats = nsys_xrealloc(kb->pats, (size_t)kb->cap * sizeof *kb->pats);
    }
    p.order = kb->n;
    kb->pats[kb->n++] = p;
    idx++;
  }
  cJSON_Delete(doc);
  return true;
}

bool nsys_kb_load_embedded(nsys_kb *kb, char *err, size_t errcap) {
  for (size_t i = 0; i < nsys_kb_embedded_count; i++) {
    const nsys_kb_file *f = &nsys_kb_embedded_files[i];
    if (!nsys_kb_add_json(kb, (const char *)f->data, f->len, f->name, err, errcap)) return false;
  }
  snprintf(kb->source, sizeof kb->source, "embedded");
  return true;
}

static int nsys__cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads the .json files of dir in name order; false (kb untouched on failure is not
 * guaranteed: the caller frees) when a file fails or none exists. */
static bool nsys__load_dir(nsys_kb *kb, const char *dir, char *err, size_t errcap) {
  DIR *d = opendir(dir);
  if (!d) {
    snprintf(err, errcap, "%s: cannot open", dir);
    return false;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0) {
      if (n == cap) {
        cap = cap ? cap * 2 : 16;
        names = nsys_xrealloc(names, cap * sizeof *names);
      }
      names[n++] = nsys_xstrdup(e->d_name);
    }
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, nsys__cmp_str);
  bool ok = n > 0;
  if (!ok) snprintf(err, errcap, "%s: no *.json files", dir);
  for (size_t i = 0; i < n; i++) {
    if (ok) {
      char *path = nsys_xasprintf("%s/%s", dir, names[i]);
      FILE *fp = fopen(path, "rb");
      if (!fp) {
        snprintf(err, errcap, "%s: cannot read", path);
        ok = false;
      } else {
        nsys_strbuf b;
        nsys_strbuf_init(&b);
        char chunk[8192];
        size_t r;
        while ((r = fread(chunk, 1, sizeof chunk, fp)) > 0) nsys_strbuf_append(&b, chunk, r);
        fclose(fp);
        ok = nsys_kb_add_json(kb, b.data ? b.data : "", b.len, names[i], err, errcap);
        nsys_strbuf_free(&b);
      }
      free(path);
    }
    free(names[i]);
  }
  free(names);
  if (ok) snprintf(kb->source, sizeof kb->source, "%s", dir);
  return ok;
}

static nsys_kb nsys__global;
static pthread_once_t nsys__once = PTHREAD_ONCE_INIT;

static void nsys__load_global(void) {
  char err[512] = "";
  nsys_kb_init(&nsys__global);
  const char *data = getenv("NSYS_AI_DATA_DIR");
  if (data && *data) {
    char *dir = nsys_xasprintf("%s/kernels", data);
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
      if (nsys__load_dir(&nsys__global, dir, err, sizeof err)) {
        free(dir);
        return;
      }
      nsys_log("knowledge base: %s; using the embedded copy", err);
      nsys_kb_free(&nsys__global);
      nsys_kb_init(&nsys__global);
    }
    free(dir);
  }
  if (!nsys_kb_load_embedded(&nsys__global, err, sizeof err)) {
    /* cannot happen: embed_kb.py validated the files at build time */
    nsys_log("knowledge base: %s", err);
  }
}

const nsys_kb *nsys_kb_get(void) {
  pthread_once(&nsys__once, nsys__load_global);
  return &nsys__global;
}

static const char *nsys__strstr_icase(const char *h, const char *n, size_t nl) {
  if (nl == 0) return h;
  for (; *h; h++) {
    if (strncasecmp(h, n, nl) == 0) return h;
  }
  return NULL;
}

static bool nsys__match_one(const nsys_kb_pattern *p, const char *s) {
  if (!s || !*s) return false;
  switch (p->kind) {
    case NSYS_KB_EXACT: return p->icase ? strcasecmp(s, p->match) == 0 : strcmp(s, p->match) == 0;
    case NSYS_KB_PREFIX:
      return p->icase ? strncasecmp(s, p->match, p->match_len) == 0 : strncmp(s, p->match, p->match_len) == 0;
    case NSYS_KB_CONTAINS:
      return p->icase ? nsys__strstr_icase(s, p->match, p->match_len) != NULL : strstr(s, p->match) != NULL;
    case NSYS_KB_GLOB: return fnmatch(p->match, s, p->icase ? FNM_CASEFOLD : 0) == 0;
    case NSYS_KB_REGEX: return p->has_re && regexec(&p->re, s, 0, NULL, 0) == 0;
  }
  return false;
}

bool nsys_kb_pattern_matches(const nsys_kb_pattern *p, const char *short_name, const char *full_name) {
  if (p->field != NSYS_KB_FIELD_FULL && nsys__match_one(p, short_name)) return true;
  if (p->field != NSYS_KB_FIELD_SHORT && nsys__match_one(p, full_name)) return true;
  return false;
}

const nsys_kb_pattern *nsys_kb_match(const nsys_kb *kb, const char *short_name, const char *full_name) {
  if (!kb) return NULL;
  /* bound the work on hostile input: names longer than this are cut */
  char sbuf[4096], fbuf[8192];
  const char *s = short_name, *f = full_name;
  if (s && strnlen(s, sizeof sbuf) >= sizeof sbuf) {
    memcpy(sbuf, s, sizeof sbuf - 1);
    sbuf[sizeof sbuf - 1] = '\0';
    s = sbuf;
  }
  if (f && strnlen(f, sizeof fbuf) >= sizeof fbuf) {
    memcpy(fbuf, f, sizeof fbuf - 1);
    fbuf[sizeof fbuf - 1] = '\0';
    f = fbuf;
  }
  const nsys_kb_pattern *best = NULL;
  for (int i = 0; i < kb->n; i++) {
    const nsys_kb_pattern *p = &kb->pats[i];
    if (best && (p->priority < best->priority ||
                 (p->priority == best->priority && p->match_len <= best->match_len)))
      continue;
    if (nsys_kb_pattern_matches(p, s, f)) best = p;
  }
  return best;
}
