/* libcurl, loaded at run time with dlopen on the first LLM request: the binary
 * starts and serves everything else where no libcurl is installed, and needs
 * no libcurl headers to build (the self-contained binary of
 * scripts/package.sh).
 *
 * Declared here is the slice of libcurl's stable ABI (SONAME libcurl.so.4,
 * unchanged since 2006) that explain/llm.c uses, under NSYS_ names; the values
 * are libcurl's own, and tests/c/common/test_curl_dl.c checks each against
 * <curl/curl.h> where that header is installed. */
#ifndef NSYS_COMMON_CURL_DL_H
#define NSYS_COMMON_CURL_DL_H

#include <stddef.h>
#include <stdint.h>

typedef struct nsys_curl nsys_curl;             /* CURL */
typedef struct nsys_curl_slist nsys_curl_slist; /* struct curl_slist */
typedef int64_t nsys_curl_off_t;                /* curl_off_t: 64 bits on every 64-bit Linux */

enum { /* CURLoption */
  NSYS_CURLOPT_WRITEDATA = 10001,
  NSYS_CURLOPT_URL = 10002,
  NSYS_CURLOPT_POSTFIELDS = 10015,
  NSYS_CURLOPT_HTTPHEADER = 10023,
  NSYS_CURLOPT_HEADERDATA = 10029,
  NSYS_CURLOPT_XFERINFODATA = 10057,
  NSYS_CURLOPT_PROTOCOLS_STR = 10318, /* libcurl >= 7.85; older ones answer "unknown option" */
  NSYS_CURLOPT_WRITEFUNCTION = 20011,
  NSYS_CURLOPT_HEADERFUNCTION = 20079,
  NSYS_CURLOPT_XFERINFOFUNCTION = 20219,
  NSYS_CURLOPT_NOPROGRESS = 43,
  NSYS_CURLOPT_POST = 47,
  NSYS_CURLOPT_FOLLOWLOCATION = 52,
  NSYS_CURLOPT_POSTFIELDSIZE = 60,
  NSYS_CURLOPT_NOSIGNAL = 99,
  NSYS_CURLOPT_TIMEOUT_MS = 155,
  NSYS_CURLOPT_CONNECTTIMEOUT_MS = 156,
};
enum { NSYS_CURLINFO_RESPONSE_CODE = 0x200002 }; /* CURLINFO */
enum {                                           /* CURLcode */
  NSYS_CURLE_OK = 0,
  NSYS_CURLE_COULDNT_CONNECT = 7,
  NSYS_CURLE_WRITE_ERROR = 23,
  NSYS_CURLE_OPERATION_TIMEDOUT = 28,
  NSYS_CURLE_ABORTED_BY_CALLBACK = 42,
  NSYS_CURLE_GOT_NOTHING = 52,
  NSYS_CURLE_SEND_ERROR = 55,
  NSYS_CURLE_RECV_ERROR = 56,
};
enum { NSYS_CURL_GLOBAL_DEFAULT = 3 };

/* libcurl's functions, as loaded. Options and codes are ints (libcurl's enums). */
typedef struct {
  int (*global_init)(long flags);
  nsys_curl *(*easy_init)(void);
  int (*easy_setopt)(nsys_curl *h, int option, ...);
  int (*easy_perform)(nsys_curl *h);
  int (*easy_getinfo)(nsys_curl *h, int info, ...);
  void (*easy_cleanup)(nsys_curl *h);
  const char *(*easy_strerror)(int code);
  nsys_curl_slist *(*slist_append)(nsys_curl_slist *list, const char *s);
  void (*slist_free_all)(nsys_curl_slist *list);
} nsys_curl_api;

/* libcurl, loaded and initialised (curl_global_init) once per process, from
 * $NSYS_AI_LIBCURL when set (a path or a file name), else libcurl.so.4, else
 * libcurl-gnutls.so.4. NULL when none loads: then `err` (capacity `cap`) says
 * which were tried, why they failed and how to install libcurl. Thread-safe. */
const nsys_curl_api *nsys_curl_load(char *err, size_t cap);

#endif
