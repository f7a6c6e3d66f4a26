/* LLM client over libcurl, loaded at run time (see llm.h, common/curl_dl.h). */
#include "common/curl_dl.h"
#include "agent/llm.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/param_specs.gen.h"
#include "common/util.h"
#include "explain/sha256.h"
#include "rpc/json_write.h"

#define NSYS__MAX_REPLY (4u << 20)

/* ---- configuration ----------------------------------------------------- */

static pthread_mutex_t nsys__cfg_mu = PTHREAD_MUTEX_INITIALIZER;
static bool nsys__cfg_loaded;
static nsys_llm_config nsys__cfg;

static void nsys__set(char *dst, size_t cap, const char *v) { snprintf(dst, cap, "%s", v ? v : ""); }

static void nsys__defaults(nsys_llm_config *c) {
  memset(c, 0, sizeof *c);
  nsys__set(c->provider, sizeof c->provider, "openai");
  c->timeout_ms = 60000;
  c->connect_timeout_ms = 5000;
  c->backoff_ms = 500;
  c->retries = 3;
  nsys__set(c->source, sizeof c->source, "none");
}

static void nsys__finish(nsys_llm_config *c, bool provider_explicit) {
  if (!c->base_url[0] && provider_explicit) {
    nsys__set(c->base_url, sizeof c->base_url,
              strcmp(c->provider, "anthropic") == 0 ? "https://api.anthropic.com" : "https://api.openai.com/v1");
  }
  if (!c->key_env[0])
    nsys__set(c->key_env, sizeof c->key_env, strcmp(c->provider, "anthropic") == 0 ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
  /* strip a trailing slash so we can append paths */
  size_t n = strlen(c->base_url);
  while (n > 0 && c->base_url[n - 1] == '/') c->base_url[--n] = '\0';
  c->configured = c->base_url[0] && c->model[0];
}

static bool nsys__valid_provider(const char *p) { return strcmp(p, "openai") == 0 || strcmp(p, "anthropic") == 0; }

/* Applies a JSON object; returns false (err set) on a bad field. */
static bool nsys__apply_json(nsys_llm_config *c, const cJSON *o, bool *provider_explicit, char *err, size_t errcap) {
  static const struct {
    const char *key;
    size_t off, cap;
  } strs[] = {{"provider", offsetof(nsys_llm_config, provider), sizeof(((nsys_llm_config *)0)->provider)},
              {"baseUrl", offsetof(nsys_llm_config, base_url), sizeof(((nsys_llm_config *)0)->base_url)},
              {"model", offsetof(nsys_llm_config, model), sizeof(((nsys_llm_config *)0)->model)},
              {"apiKeyEnv", offsetof(nsys_llm_config, key_env), sizeof(((nsys_llm_config *)0)->key_env)}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(strs); i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, strs[i].key);
    if (!v) continue;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= strs[i].cap) {
      snprintf(err, errcap, "llm.%s: expected a string shorter than %zu bytes", strs[i].key, strs[i].cap);
      return false;
    }
    nsys__set((char *)c + strs[i].off, strs[i].cap, v->valuestring);
    if (strcmp(strs[i].key, "provider") == 0) {
      if (!nsys__valid_provider(v->valuestring)) {
        snprintf(err, errcap, "llm.provider: expected \"openai\" or \"anthropic\"");
        return false;
      }
      *provider_explicit = true;
    }
  }
  static const struct {
    const char *key;
    long min, max;
  } nums[] = {/* bounds: agent.configure.params.json */
              {"timeoutMs", NSYS_P_AGENT_CONFIGURE_TIMEOUT_MS_MIN, NSYS_P_AGENT_CONFIGURE_TIMEOUT_MS_MAX},
              {"connectTimeoutMs", NSYS_P_AGENT_CONFIGURE_CONNECT_TIMEOUT_MS_MIN, NSYS_P_AGENT_CONFIGURE_CONNECT_TIMEOUT_MS_MAX},
              {"retries", NSYS_P_AGENT_CONFIGURE_RETRIES_MIN, NSYS_P_AGENT_CONFIGURE_RETRIES_MAX},
              {"backoffMs", NSYS_P_AGENT_CONFIGURE_BACKOFF_MS_MIN, NSYS_P_AGENT_CONFIGURE_BACKOFF_MS_MAX}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(nums); i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, nums[i].key);
    if (!v) continue;
    if (!cJSON_IsNumber(v) || v->valuedouble < nums[i].min || v->valuedouble > nums[i].max) {
      snprintf(err, errcap, "llm.%s: expected a number in %ld..%ld", nums[i].key, nums[i].min, nums[i].max);
      return false;
    }
    long x = (long)v->valuedouble;
    if (i == 0) c->timeout_ms = x;
    else if (i == 1) c->connect_timeout_ms = x;
    else if (i == 2) c->retries = (int)x;
    else c->backoff_ms = x;
  }
  return true;
}

static char *nsys__read_file(const char *path, size_t max) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  char chunk[4096];
  size_t r;
  while ((r = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len < max) nsys_strbuf_append(&b, chunk, r);
  fclose(f);
  if (!b.data) nsys_strbuf_puts(&b, "");
  return nsys_strbuf_steal(&b);
}

static void nsys__load_locked(void) {
  nsys__defaults(&nsys__cfg);
  bool provider_explicit = false;
  /* 1. config file */
  char *path = NULL;
  const char *e = getenv("NSYS_AI_CONFIG");
  if (e && *e) path = nsys_xstrdup(e);
  else if ((e = getenv("XDG_CONFIG_HOME")) && *e) path = nsys_xasprintf("%s/nsys-ai/config.json", e);
  else if ((e = getenv("HOME")) && *e) path = nsys_xasprintf("%s/.config/nsys-ai/config.json", e);
  if (path) {
    char *text = nsys__read_file(path, 1 << 20);
    if (text) {
      cJSON *doc = cJSON_Parse(text);
      const cJSON *llm = doc ? cJSON_GetObjectItemCaseSensitive(doc, "llm") : NULL;
      char err[256];
      if (!doc) nsys_log("config %s: not valid JSON; ignored", path);
      else if (cJSON_IsObject(llm)) {
        if (nsys__apply_json(&nsys__cfg, llm, &provider_explicit, err, sizeof err))
          nsys__set(nsys__cfg.source, sizeof nsys__cfg.source, "file");
        else
          nsys_log("config %s: %s; LLM settings ignored", path, err);
      }
      cJSON_Delete(doc);
      free(text);
    }
    free(path);
  }
  /* 2. environment */
  static const struct {
    const char *env;
    size_t off, cap;
  } envs[] = {{"NSYS_AI_LLM_PROVIDER", offsetof(nsys_llm_config, provider), sizeof(((nsys_llm_config *)0)->provider)},
              {"NSYS_AI_LLM_BASE_URL", offsetof(nsys_llm_config, base_url), sizeof(((nsys_llm_config *)0)->base_url)},
              {"NSYS_AI_LLM_MODEL", offsetof(nsys_llm_config, model), sizeof(((nsys_llm_config *)0)->model)},
              {"NSYS_AI_LLM_API_KEY_ENV", offsetof(nsys_llm_config, key_env), sizeof(((nsys_llm_config *)0)->key_env)}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(envs); i++) {
    const char *v = getenv(envs[i].env);
    if (!v || !*v) continue;
    if (i == 0 && !nsys__valid_provider(v)) {
      nsys_log("%s=%s is not openai or anthropic; ignored", envs[i].env, v);
      continue;
    }
    nsys__set((char *)&nsys__cfg + envs[i].off, envs[i].cap, v);
    if (i == 0) provider_explicit = true;
    nsys__set(nsys__cfg.source, sizeof nsys__cfg.source, "env");
  }
  static const struct {
    const char *env;
    long min, max;
  } nums[] = {/* the same bounds as agent/configure's */
              {"NSYS_AI_LLM_TIMEOUT_MS", NSYS_P_AGENT_CONFIGURE_TIMEOUT_MS_MIN, NSYS_P_AGENT_CONFIGURE_TIMEOUT_MS_MAX},
              {"NSYS_AI_LLM_CONNECT_TIMEOUT_MS", NSYS_P_AGENT_CONFIGURE_CONNECT_TIMEOUT_MS_MIN,
               NSYS_P_AGENT_CONFIGURE_CONNECT_TIMEOUT_MS_MAX},
              {"NSYS_AI_LLM_RETRIES", NSYS_P_AGENT_CONFIGURE_RETRIES_MIN, NSYS_P_AGENT_CONFIGURE_RETRIES_MAX},
              {"NSYS_AI_LLM_BACKOFF_MS", NSYS_P_AGENT_CONFIGURE_BACKOFF_MS_MIN, NSYS_P_AGENT_CONFIGURE_BACKOFF_MS_MAX}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(nums); i++) {
    const char *v = getenv(nums[i].env);
    if (!v || !*v) continue;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (!end || *end || x < nums[i].min || x > nums[i].max) {
      nsys_log("%s=%s is outside %ld..%ld; ignored", nums[i].env, v, nums[i].min, nums[i].max);
      continue;
    }
    if (i == 0) nsys__cfg.timeout_ms = x;
    else if (i == 1) nsys__cfg.connect_timeout_ms = x;
    else if (i == 2) nsys__cfg.retries = (int)x;
    else nsys__cfg.backoff_ms = x;
  }
  nsys__finish(&nsys__cfg, provider_explicit);
  nsys__cfg_loaded = true;
}

void nsys_llm_config_get(nsys_llm_config *out) {
  pthread_mutex_lock(&nsys__cfg_mu);
  if (!nsys__cfg_loaded) nsys__load_locked();
  *out = nsys__cfg;
  pthread_mutex_unlock(&nsys__cfg_mu);
}

bool nsys_llm_configure(const cJSON *opts, char *err, size_t errcap) {
  if (!cJSON_IsObject(opts)) {
    snprintf(err, errcap, "llm: expected an object");
    return false;
  }
  pthread_mutex_lock(&nsys__cfg_mu);
  if (!nsys__cfg_loaded) nsys__load_locked();
  nsys_llm_config c = nsys__cfg;
  bool provider_explicit = strcmp(c.provider, "openai") != 0 || c.base_url[0];
  const cJSON *en = cJSON_GetObjectItemCaseSensitive(opts, "enabled");
  bool ok = true;
  if (cJSON_IsFalse(en)) {
    nsys__defaults(&c);
    nsys__finish(&c, false);
  } else {
    ok = nsys__apply_json(&c, opts, &provider_explicit, err, errcap);
    if (ok) nsys__finish(&c, provider_explicit);
  }
  if (ok) {
    nsys__set(c.source, sizeof c.source, "configure");
    nsys__cfg = c;
  }
  pthread_mutex_unlock(&nsys__cfg_mu);
  return ok;
}

cJSON *nsys_llm_config_json(const nsys_llm_config *c) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddBoolToObject(o, "configured", c->configured);
  cJSON_AddStringToObject(o, "provider", c->provider);
  if (c->base_url[0]) cJSON_AddStringToObject(o, "baseUrl", c->base_url);
  else cJSON_AddNullToObject(o, "baseUrl");
  if (c->model[0]) cJSON_AddStringToObject(o, "model", c->model);
  else cJSON_AddNullToObject(o, "model");
  cJSON_AddStringToObject(o, "apiKeyEnv", c->key_env);
  const char *k = c->key_env[0] ? getenv(c->key_env) : NULL;
  cJSON_AddBoolToObject(o, "apiKeySet", k && *k);
  cJSON_AddNumberToObject(o, "timeoutMs", (double)c->timeout_ms);
  cJSON_AddNumberToObject(o, "connectTimeoutMs", (double)c->connect_timeout_ms);
  cJSON_AddNumberToObject(o, "retries", c->retries);
  cJSON_AddStringToObject(o, "source", c->source);
  return o;
}

/* ---- cache -------------------------------------------------------------- */

static char *nsys__cache_path(const nsys_llm_config *c, const char *system, const char *user) {
  nsys_sha256 s;
  uint8_t d[32];
  nsys_sha256_init(&s);
  const char *parts[] = {c->provider, c->base_url, c->model, system, user};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(parts); i++) {
    nsys_sha256_update(&s, parts[i], strlen(parts[i]));
    nsys_sha256_update(&s, "\n\x1e", 2);
  }
  nsys_sha256_final(&s, d);
  char hex[65];
  for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
  char *dir = nsys_cache_dir();
  if (!dir) return NULL;
  char *sub = nsys_xasprintf("%s/llm", dir);
  free(dir);
  if (mkdir(sub, 0700) != 0 && errno != EEXIST) {
    free(sub);
    return NULL;
  }
  chmod(sub, 0700);
  char *path = nsys_xasprintf("%s/%s.json", sub, hex);
  free(sub);
  return path;
}

static char *nsys__cache_read(const char *path, const char *model) {
  char *text = nsys__read_file(path, NSYS__MAX_REPLY);
  if (!text) return NULL;
  cJSON *doc = cJSON_Parse(text);
  free(text);
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "model");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "text");
  char *out = NULL;
  if (cJSON_IsString(m) && strcmp(m->valuestring, model) == 0 && cJSON_IsString(t)) out = nsys_xstrdup(t->valuestring);
  cJSON_Delete(doc);
  return out;
}

static void nsys__cache_write(const char *path, const char *model, const char *answer) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "model", model);
  cJSON_AddStringToObject(doc, "text", answer);
  char *s = nsys_json_print(doc, false);
  cJSON_Delete(doc);
  char *tmp = nsys_xasprintf("%s.%ld.tmp", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0) {
    size_t n = strlen(s), off = 0;
    while (off < n) {
      ssize_t w = write(fd, s + off, n - off);
      if (w <= 0) break;
      off += (size_t)w;
    }
    fchmod(fd, 0600);
    close(fd);
    if (off == n && rename(tmp, path) == 0) {
      free(tmp);
      free(s);
      return;
    }
    unlink(tmp);
  }
  free(tmp);
  free(s);
}

/* ---- HTTP --------------------------------------------------------------- */

typedef struct {
  nsys_strbuf body;
  bool too_big;
  nsys_call *call;
  long retry_after_s;
} nsys__xfer;

static size_t nsys__write_cb(char *ptr, size_t size, size_t nmemb, void *ud) {
  nsys__xfer *x = ud;
  size_t n = size * nmemb;
  if (x->body.len + n > NSYS__MAX_REPLY) {
    x->too_big = true;
    return 0;
  }
  nsys_strbuf_append(&x->body, ptr, n);
  return n;
}

static size_t nsys__header_cb(char *buf, size_t size, size_t nitems, void *ud) {
  nsys__xfer *x = ud;
  size_t n = size * nitems;
  if (n > 12 && strncasecmp(buf, "Retry-After:", 12) == 0) {
    long v = strtol(buf + 12, NULL, 10);
    if (v > 0 && v < 3600) x->retry_after_s = v;
  }
  return n;
}

static int nsys__progress_cb(void *ud, nsys_curl_off_t dt, nsys_curl_off_t dn, nsys_curl_off_t ut, nsys_curl_off_t un) {
  (void)dt;
  (void)dn;
  (void)ut;
  (void)un;
  nsys__xfer *x = ud;
  return nsys_call_cancelled(x->call) ? 1 : 0;
}

/* Replaces every occurrence of the key in s (in place) with "***". */
static void nsys__redact(char *s, const char *key) {
  if (!key || strlen(key) < 4) return;
  size_t kl = strlen(key);
  char *p;
  while ((p = strstr(s, key)) != NULL) {
    memcpy(p, "***", 3);
    memmove(p + 3, p + kl, strlen(p + kl) + 1);
  }
}

static char *nsys__request_body(const nsys_llm_config *c, const char *system, const char *user) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "model", c->model);
  cJSON_AddNumberToObject(o, "max_tokens", 1024);
  cJSON *msgs;
  if (strcmp(c->provider, "anthropic") == 0) {
    cJSON_AddStringToObject(o, "system", system);
    msgs = cJSON_AddArrayToObject(o, "messages");
  } else {
    cJSON_AddNumberToObject(o, "temperature", 0.2);
    msgs = cJSON_AddArrayToObject(o, "messages");
    cJSON *sm = cJSON_CreateObject();
    cJSON_AddStringToObject(sm, "role", "system");
    cJSON_AddStringToObject(sm, "content", system);
    cJSON_AddItemToArray(msgs, sm);
  }
  cJSON *um = cJSON_CreateObject();
  cJSON_AddStringToObject(um, "role", "user");
  cJSON_AddStringToObject(um, "content", user);
  cJSON_AddItemToArray(msgs, um);
  char *s = nsys_json_print(o, false);
  cJSON_Delete(o);
  return s;
}

/* Extracts the answer text; NULL when the reply is not the expected shape. */
static char *nsys__parse_reply(const nsys_llm_config *c, const char *body, size_t len) {
  cJSON *doc = cJSON_ParseWithLength(body, len);
  if (!doc) return NULL;
  char *out = NULL;
  if (strcmp(c->provider, "anthropic") == 0) {
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(doc, "content"), *blk;
    nsys_strbuf b;
    nsys_strbuf_init(&b);
    cJSON_ArrayForEach(blk, content) {
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(blk, "text");
      if (cJSON_IsString(t)) nsys_strbuf_puts(&b, t->valuestring);
    }
    if (b.len) out = nsys_strbuf_steal(&b);
    nsys_strbuf_free(&b);
  } else {
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "choices"), 0);
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(ch, "message");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(msg, "content");
    if (cJSON_IsString(t)) out = nsys_xstrdup(t->valuestring);
  }
  cJSON_Delete(doc);
  return out;
}

/* Sleeps ms in small steps; false when cancelled meanwhile. */
static bool nsys__sleep_cancellable(nsys_call *call, long ms) {
  while (ms > 0) {
    if (nsys_call_cancelled(call)) return false;
    long step = ms < 50 ? ms : 50;
    struct timespec ts = {0, step * 1000000L};
    nanosleep(&ts, NULL);
    ms -= step;
  }
  return !nsys_call_cancelled(call);
}

/* Host part of a URL for messages ("127.0.0.1:8080"). */
static void nsys__host(const char *url, char *out, size_t cap) {
  const char *p = strstr(url, "://");
  p = p ? p + 3 : url;
  size_t n = strcspn(p, "/?#");
  snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
}

/* POSTs body to the configured endpoint with retries (429, 5xx, refused
 * connections; Retry-After honoured) and returns the 2xx reply's body in
 * *reply (malloc'd, *len bytes), or false after nsys_call_fail(): -32015 or
 * -32800. timeout_ms > 0 lowers the configured total timeout of each attempt. */
static bool nsys__post(nsys_call *call, const nsys_llm_config *cfg, const char *body, long timeout_ms, char **reply,
                       size_t *len, int *attempts_out) {
  *reply = NULL;
  *len = 0;
  char load_err[1024];
  const nsys_curl_api *curl = nsys_curl_load(load_err, sizeof load_err);
  if (!curl) {
    nsys_call_fail(call, NSYS_E_LLM, "llm: %s", load_err);
    return false;
  }
  const bool anthropic = strcmp(cfg->provider, "anthropic") == 0;
  char *url = nsys_xasprintf("%s%s", cfg->base_url, anthropic ? "/v1/messages" : "/chat/completions");
  char host[256];
  nsys__host(cfg->base_url, host, sizeof host);
  long total_ms = timeout_ms > 0 && timeout_ms < cfg->timeout_ms ? timeout_ms : cfg->timeout_ms;
  const char *key = cfg->key_env[0] ? getenv(cfg->key_env) : NULL;
  nsys_curl_slist *hdr = NULL;
  hdr = curl->slist_append(hdr, "Content-Type: application/json");
  if (key && *key) {
    char *h = anthropic ? nsys_xasprintf("x-api-key: %s", key) : nsys_xasprintf("Authorization: Bearer %s", key);
    hdr = curl->slist_append(hdr, h);
    memset(h, 0, strlen(h));
    free(h);
  }
  if (anthropic) hdr = curl->slist_append(hdr, "anthropic-version: 2023-06-01");
  bool ok = false;
  char err[512] = "";
  bool cancelled = false;
  int attempts = 0;
  for (int attempt = 0; attempt <= cfg->retries; attempt++) {
    if (nsys_call_cancelled(call)) {
      cancelled = true;
      break;
    }
    nsys_curl *h = curl->easy_init();
    if (!h) {
      snprintf(err, sizeof err, "could not initialise libcurl");
      break;
    }
    nsys__xfer x;
    memset(&x, 0, sizeof x);
    nsys_strbuf_init(&x.body);
    x.call = call;
    curl->easy_setopt(h, NSYS_CURLOPT_URL, url);
    curl->easy_setopt(h, NSYS_CURLOPT_POST, 1L);
    curl->easy_setopt(h, NSYS_CURLOPT_POSTFIELDS, body);
    curl->easy_setopt(h, NSYS_CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl->easy_setopt(h, NSYS_CURLOPT_HTTPHEADER, hdr);
    curl->easy_setopt(h, NSYS_CURLOPT_WRITEFUNCTION, nsys__write_cb);
    curl->easy_setopt(h, NSYS_CURLOPT_WRITEDATA, &x);
    curl->easy_setopt(h, NSYS_CURLOPT_HEADERFUNCTION, nsys__header_cb);
    curl->easy_setopt(h, NSYS_CURLOPT_HEADERDATA, &x);
    curl->easy_setopt(h, NSYS_CURLOPT_NOPROGRESS, 0L);
    curl->easy_setopt(h, NSYS_CURLOPT_XFERINFOFUNCTION, nsys__progress_cb);
    curl->easy_setopt(h, NSYS_CURLOPT_XFERINFODATA, &x);
    curl->easy_setopt(h, NSYS_CURLOPT_CONNECTTIMEOUT_MS, cfg->connect_timeout_ms);
    curl->easy_setopt(h, NSYS_CURLOPT_TIMEOUT_MS, total_ms);
    curl->easy_setopt(h, NSYS_CURLOPT_NOSIGNAL, 1L);
    curl->easy_setopt(h, NSYS_CURLOPT_FOLLOWLOCATION, 0L);
    curl->easy_setopt(h, NSYS_CURLOPT_PROTOCOLS_STR, "http,https");
    attempts++;
    int rc = curl->easy_perform(h);
    long status = 0;
    curl->easy_getinfo(h, NSYS_CURLINFO_RESPONSE_CODE, &status);
    curl->easy_cleanup(h);
    bool retry = false;
    if (rc == NSYS_CURLE_ABORTED_BY_CALLBACK || nsys_call_cancelled(call)) {
      cancelled = true;
    } else if (rc == NSYS_CURLE_OPERATION_TIMEDOUT) {
      snprintf(err, sizeof err, "the LLM endpoint %s did not answer within %ld ms", host, total_ms);
    } else if (rc == NSYS_CURLE_WRITE_ERROR && x.too_big) {
      snprintf(err, sizeof err, "the reply from %s exceeds %u bytes", host, NSYS__MAX_REPLY);
    } else if (rc != NSYS_CURLE_OK) {
      snprintf(err, sizeof err, "cannot reach the LLM endpoint %s: %s", host, curl->easy_strerror(rc));
      retry = rc == NSYS_CURLE_COULDNT_CONNECT || rc == NSYS_CURLE_RECV_ERROR || rc == NSYS_CURLE_SEND_ERROR || rc == NSYS_CURLE_GOT_NOTHING;
    } else if (status == 429 || status >= 500) {
      snprintf(err, sizeof err, "the LLM endpoint %s answered HTTP %ld", host, status);
      retry = true;
    } else if (status < 200 || status >= 300) {
      char snippet[160];
      snprintf(snippet, sizeof snippet, "%.*s", (int)NSYS_MIN(x.body.len, (size_t)120), x.body.data ? x.body.data : "");
      for (char *q = snippet; *q; q++)
        if ((unsigned char)*q < 0x20) *q = ' ';
      snprintf(err, sizeof err, "the LLM endpoint %s answered HTTP %ld: %s", host, status, snippet);
    } else {
      *len = x.body.len;
      if (!x.body.data) nsys_strbuf_puts(&x.body, "");
      *reply = nsys_strbuf_steal(&x.body);
      ok = true;
    }
    long wait = cfg->backoff_ms << (attempt < 10 ? attempt : 10);
    if (x.retry_after_s > 0) wait = NSYS_MIN(x.retry_after_s * 1000L, 10000L);
    nsys_strbuf_free(&x.body);
    if (ok || cancelled || !retry || attempt == cfg->retries) break;
    if (!nsys__sleep_cancellable(call, wait)) {
      cancelled = true;
      break;
    }
  }
  curl->slist_free_all(hdr);
  free(url);
  *attempts_out = attempts;
  if (ok) return true;
  if (cancelled) {
    nsys_call_fail_cancelled(call);
    return false;
  }
  nsys__redact(err, key);
  nsys_call_fail(call, NSYS_E_LLM, "LLM request failed after %d attempt%s: %s", attempts, attempts == 1 ? "" : "s", err);
  return false;
}

bool nsys_llm_complete(nsys_call *call, const nsys_llm_config *cfg, const char *system, const char *user,
                       nsys_llm_answer *ans) {
  memset(ans, 0, sizeof *ans);
  if (!cfg->configured) {
    nsys_call_fail(call, NSYS_E_LLM_NOT_CONFIGURED, "llm: no LLM endpoint is configured");
    return false;
  }
  char *cache = nsys__cache_path(cfg, system, user);
  if (cache) {
    char *hit = nsys__cache_read(cache, cfg->model);
    if (hit) {
      ans->text = hit;
      ans->cached = true;
      free(cache);
      return true;
    }
  }
  char *body = nsys__request_body(cfg, system, user);
  char *reply = NULL;
  size_t len = 0;
  bool ok = nsys__post(call, cfg, body, 0, &reply, &len, &ans->attempts);
  free(body);
  if (ok) {
    ans->text = nsys__parse_reply(cfg, reply, len);
    if (!ans->text) {
      char host[256];
      nsys__host(cfg->base_url, host, sizeof host);
      nsys_call_fail(call, NSYS_E_LLM, "LLM request failed after %d attempt%s: the LLM endpoint %s sent a malformed "
                     "reply (no answer text in the JSON)", ans->attempts, ans->attempts == 1 ? "" : "s", host);
      ok = false;
    } else if (cache) {
      nsys__cache_write(cache, cfg->model, ans->text);
    }
  }
  free(reply);
  free(cache);
  return ok;
}

bool nsys_llm_chat(nsys_call *call, const nsys_llm_config *cfg, cJSON *request, long timeout_ms, cJSON **reply) {
  *reply = NULL;
  if (!cfg->configured) {
    nsys_call_fail(call, NSYS_E_LLM_NOT_CONFIGURED, "llm: no LLM endpoint is configured");
    return false;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(request, "model");
  cJSON_AddStringToObject(request, "model", cfg->model);
  char *body = nsys_json_print(request, false);
  char *text = NULL;
  size_t len = 0;
  int attempts = 0;
  bool ok = nsys__post(call, cfg, body, timeout_ms, &text, &len, &attempts);
  free(body);
  if (ok) {
    *reply = cJSON_ParseWithLength(text, len);
    if (!cJSON_IsObject(*reply)) {
      cJSON_Delete(*reply);
      *reply = NULL;
      char host[256];
      nsys__host(cfg->base_url, host, sizeof host);
      nsys_call_fail(call, NSYS_E_LLM, "the LLM endpoint %s sent a malformed reply (not a JSON object)", host);
      ok = false;
    }
  }
  free(text);
  return ok;
}

/* ---- kernel/explain enrichment -------------------------------------------- */

static const char *nsys__s(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void nsys__fact_num(nsys_strbuf *b, const cJSON *o, const char *k, const char *label) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (cJSON_IsNumber(v)) nsys_strbuf_printf(b, "- %s: %.6g\n", label, v->valuedouble);
}

bool nsys_llm_enrich_explain(nsys_call *call, const nsys_llm_config *cfg, cJSON *r) {
  static const char *system =
      "You are an expert in GPU performance for machine-learning workloads. Explain one CUDA kernel from an Nsight "
      "Systems profile to an ML engineer in at most 150 words: what it is and who launched it, whether it is a "
      "problem in this profile, and what to do. Use only the facts given; cite the numbers; do not invent any.";
  nsys_strbuf u;
  nsys_strbuf_init(&u);
  nsys_strbuf_printf(&u, "Kernel: %s\n", nsys__s(r, "name") ? nsys__s(r, "name") : "?");
  if (nsys__s(r, "displayName")) nsys_strbuf_printf(&u, "Short form: %s\n", nsys__s(r, "displayName"));
  nsys_strbuf_printf(&u, "Origin: %s; category: %s; likely bound: %s\n", nsys__s(r, "origin"), nsys__s(r, "category"),
                     nsys__s(r, "bound"));
  if (nsys__s(r, "description")) nsys_strbuf_printf(&u, "Knowledge base: %s\n", nsys__s(r, "description"));
  const cJSON *prec = cJSON_GetObjectItemCaseSensitive(r, "precision");
  if (nsys__s(prec, "dtype")) nsys_strbuf_printf(&u, "Precision: %s\n", nsys__s(prec, "dtype"));
  const cJSON *tc = cJSON_GetObjectItemCaseSensitive(prec, "tensorCores");
  if (cJSON_IsBool(tc)) nsys_strbuf_printf(&u, "Tensor cores: %s\n", cJSON_IsTrue(tc) ? "yes" : "no");
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "stats");
  if (cJSON_IsObject(st)) {
    nsys_strbuf_puts(&u, "Profile statistics:\n");
    nsys__fact_num(&u, st, "count", "calls");
    nsys__fact_num(&u, st, "totalNs", "total ns");
    nsys__fact_num(&u, st, "avgNs", "average ns");
    nsys__fact_num(&u, st, "medianNs", "median ns");
    nsys__fact_num(&u, st, "p95Ns", "p95 ns");
    nsys__fact_num(&u, st, "pctGpuTime", "percent of GPU time");
    nsys__fact_num(&u, st, "rank", "rank by total time");
    nsys__fact_num(&u, st, "streamCount", "streams");
  }
  const cJSON *occ = cJSON_GetObjectItemCaseSensitive(r, "occupancy");
  if (cJSON_IsObject(occ)) {
    nsys__fact_num(&u, occ, "theoretical", "theoretical occupancy (0..1)");
    if (nsys__s(occ, "limiter")) nsys_strbuf_printf(&u, "- occupancy limited by: %s\n", nsys__s(occ, "limiter"));
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(occ, "gpu");
    if (nsys__s(g, "name")) nsys_strbuf_printf(&u, "GPU: %s\n", nsys__s(g, "name"));
  }
  const cJSON *reasons = cJSON_GetObjectItemCaseSensitive(r, "boundReasons"), *it;
  cJSON_ArrayForEach(it, reasons) {
    if (cJSON_IsString(it)) nsys_strbuf_printf(&u, "Fact: %s\n", it->valuestring);
  }
  const cJSON *sugg = cJSON_GetObjectItemCaseSensitive(r, "suggestions");
  cJSON_ArrayForEach(it, sugg) {
    if (cJSON_IsString(it)) nsys_strbuf_printf(&u, "Known remedy: %s\n", it->valuestring);
  }
  nsys_llm_answer ans;
  bool ok = nsys_llm_complete(call, cfg, system, u.data, &ans);
  nsys_strbuf_free(&u);
  if (!ok) return false;
  cJSON *lo = cJSON_AddObjectToObject(r, "llm");
  cJSON_AddStringToObject(lo, "model", cfg->model);
  cJSON_AddStringToObject(lo, "provider", cfg->provider);
  cJSON_AddBoolToObject(lo, "cached", ans.cached);
  cJSON_AddStringToObject(lo, "text", ans.text);
  cJSON *md = cJSON_GetObjectItemCaseSensitive(r, "markdown");
  if (cJSON_IsString(md)) {
    char *s = nsys_xasprintf("%s\n**Assistant (%s):** %s\n", md->valuestring, cfg->model, ans.text);
    cJSON_SetValuestring(md, s);
    free(s);
  }
  free(ans.text);
  return true;
}
