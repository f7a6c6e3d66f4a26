/* libcurl loaded with dlopen (see curl_dl.h). */
#include "common/curl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t nsys__curl_once = PTHREAD_ONCE_INIT;
static nsys_curl_api nsys__curl;
static const nsys_curl_api *nsys__curl_loaded;
static char nsys__curl_err[768];

/* Resolves every function of `api` in `lib`; false (and the missing name in
 * `missing`) when one is absent. */
static int nsys__curl_resolve(void *lib, nsys_curl_api *api, const char **missing) {
  /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
#define NSYS__SYM(field, name)                          \
  do {                                                  \
    void *p = dlsym(lib, name);                         \
    if (!p) {                                           \
      *missing = name;                                  \
      return 0;                                         \
    }                                                   \
    memcpy(&api->field, &p, sizeof api->field);         \
  } while (0)
  NSYS__SYM(global_init, "curl_global_init");
  NSYS__SYM(easy_init, "curl_easy_init");
  NSYS__SYM(easy_setopt, "curl_easy_setopt");
  NSYS__SYM(easy_perform, "curl_easy_perform");
  NSYS__SYM(easy_getinfo, "curl_easy_getinfo");
  NSYS__SYM(easy_cleanup, "curl_easy_cleanup");
  NSYS__SYM(easy_strerror, "curl_easy_strerror");
  NSYS__SYM(slist_append, "curl_slist_append");
  NSYS__SYM(slist_free_all, "curl_slist_free_all");
#undef NSYS__SYM
  return 1;
}

static void nsys__curl_open(void) {
  const char *env = getenv("NSYS_AI_LIBCURL");
  const char *defaults[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};
  const char *only[] = {env};
  const char **names = env && *env ? only : defaults;
  size_t n = env && *env ? 1 : sizeof defaults / sizeof *defaults;
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    const char *why = NULL;
    const char *missing = NULL;
    if (!lib) {
      why = dlerror();
    } else if (!nsys__curl_resolve(lib, &nsys__curl, &missing)) {
      dlclose(lib);
      why = "it lacks a libcurl function";
    } else if (nsys__curl.global_init(NSYS_CURL_GLOBAL_DEFAULT) != NSYS_CURLE_OK) {
      dlclose(lib);
      why = "curl_global_init failed";
    } else {
      nsys__curl_loaded = &nsys__curl; /* stays loaded until the process exits */
      return;
    }
    int w = snprintf(nsys__curl_err + at, sizeof nsys__curl_err - at, "%s%s: %s%s%s", i ? "; " : "", names[i],
                     why ? why : "unknown error", missing ? " " : "", missing ? missing : "");
    if (w > 0) at += (size_t)w < sizeof nsys__curl_err - at ? (size_t)w : sizeof nsys__curl_err - at - 1;
  }
}

const nsys_curl_api *nsys_curl_load(char *err, size_t cap) {
  pthread_once(&nsys__curl_once, nsys__curl_open);
  if (!nsys__curl_loaded && err && cap)
    snprintf(err, cap,
             "the LLM endpoint needs libcurl, which could not be loaded (%s); install it (Debian/Ubuntu: "
             "libcurl4, RHEL/Rocky/Fedora: libcurl) or set NSYS_AI_LIBCURL to its path",
             nsys__curl_err);
  return nsys__curl_loaded;
}
