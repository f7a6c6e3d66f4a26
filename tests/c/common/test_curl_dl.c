/* libcurl loaded at run time: the ABI values of curl_dl.h are libcurl's own
 * (checked against <curl/curl.h> when the build found it), a library that does
 * not load gives a message naming what was tried and how to install libcurl,
 * and the installed libcurl (when there is one) loads and answers. */
#include <stdlib.h>
#include <string.h>

#include "common/curl_dl.h"
#include "nsys_check.h"

#ifdef NSYS_HAVE_CURL_H
#include <curl/curl.h>
static void check_abi(void) {
  CHECK_EQ(NSYS_CURLOPT_WRITEDATA, CURLOPT_WRITEDATA);
  CHECK_EQ(NSYS_CURLOPT_URL, CURLOPT_URL);
  CHECK_EQ(NSYS_CURLOPT_POSTFIELDS, CURLOPT_POSTFIELDS);
  CHECK_EQ(NSYS_CURLOPT_HTTPHEADER, CURLOPT_HTTPHEADER);
  CHECK_EQ(NSYS_CURLOPT_HEADERDATA, CURLOPT_HEADERDATA);
  CHECK_EQ(NSYS_CURLOPT_XFERINFODATA, CURLOPT_XFERINFODATA);
  CHECK_EQ(NSYS_CURLOPT_PROTOCOLS_STR, CURLOPT_PROTOCOLS_STR);
  CHECK_EQ(NSYS_CURLOPT_WRITEFUNCTION, CURLOPT_WRITEFUNCTION);
  CHECK_EQ(NSYS_CURLOPT_HEADERFUNCTION, CURLOPT_HEADERFUNCTION);
  CHECK_EQ(NSYS_CURLOPT_XFERINFOFUNCTION, CURLOPT_XFERINFOFUNCTION);
  CHECK_EQ(NSYS_CURLOPT_NOPROGRESS, CURLOPT_NOPROGRESS);
  CHECK_EQ(NSYS_CURLOPT_POST, CURLOPT_POST);
  CHECK_EQ(NSYS_CURLOPT_FOLLOWLOCATION, CURLOPT_FOLLOWLOCATION);
  CHECK_EQ(NSYS_CURLOPT_POSTFIELDSIZE, CURLOPT_POSTFIELDSIZE);
  CHECK_EQ(NSYS_CURLOPT_NOSIGNAL, CURLOPT_NOSIGNAL);
  CHECK_EQ(NSYS_CURLOPT_TIMEOUT_MS, CURLOPT_TIMEOUT_MS);
  CHECK_EQ(NSYS_CURLOPT_CONNECTTIMEOUT_MS, CURLOPT_CONNECTTIMEOUT_MS);
  CHECK_EQ(NSYS_CURLINFO_RESPONSE_CODE, CURLINFO_RESPONSE_CODE);
  CHECK_EQ(NSYS_CURLE_OK, CURLE_OK);
  CHECK_EQ(NSYS_CURLE_COULDNT_CONNECT, CURLE_COULDNT_CONNECT);
  CHECK_EQ(NSYS_CURLE_WRITE_ERROR, CURLE_WRITE_ERROR);
  CHECK_EQ(NSYS_CURLE_OPERATION_TIMEDOUT, CURLE_OPERATION_TIMEDOUT);
  CHECK_EQ(NSYS_CURLE_ABORTED_BY_CALLBACK, CURLE_ABORTED_BY_CALLBACK);
  CHECK_EQ(NSYS_CURLE_GOT_NOTHING, CURLE_GOT_NOTHING);
  CHECK_EQ(NSYS_CURLE_SEND_ERROR, CURLE_SEND_ERROR);
  CHECK_EQ(NSYS_CURLE_RECV_ERROR, CURLE_RECV_ERROR);
  CHECK_EQ(NSYS_CURL_GLOBAL_DEFAULT, CURL_GLOBAL_DEFAULT);
  CHECK_EQ(sizeof(nsys_curl_off_t), sizeof(curl_off_t));
}
#endif

int main(int argc, char **argv) {
#ifdef NSYS_HAVE_CURL_H
  check_abi();
#else
  nsys_check_skip("<curl/curl.h> not installed: the ABI values are not compared");
#endif
  char err[1024] = "";
  if (argc > 1 && strcmp(argv[1], "--missing") == 0) {
    /* A library that is not there: no API, and a message that says what to do. */
    setenv("NSYS_AI_LIBCURL", "/nonexistent/libcurl.so.4", 1);
    CHECK(nsys_curl_load(err, sizeof err) == NULL);
    CHECK_MSG(strstr(err, "/nonexistent/libcurl.so.4") != NULL, "%s", err);
    CHECK_MSG(strstr(err, "install it") != NULL, "%s", err);
    CHECK_MSG(strstr(err, "NSYS_AI_LIBCURL") != NULL, "%s", err);
    /* Loaded once per process: the second answer is the same. */
    char again[1024] = "";
    CHECK(nsys_curl_load(again, sizeof again) == NULL);
    CHECK_STR(again, err);
    return nsys_check_done("curl_dl --missing");
  }
  if (argc > 1 && strcmp(argv[1], "--not-curl") == 0) {
    /* A library without libcurl's functions is refused, not half used. */
    setenv("NSYS_AI_LIBCURL", "libm.so.6", 1);
    CHECK(nsys_curl_load(err, sizeof err) == NULL);
    CHECK_MSG(strstr(err, "lacks a libcurl function curl_global_init") != NULL, "%s", err);
    return nsys_check_done("curl_dl --not-curl");
  }
  const nsys_curl_api *curl = nsys_curl_load(err, sizeof err);
  if (!curl) {
    nsys_check_skip("no libcurl on this machine: %s", err);
  } else {
    /* A handle takes options and a failing transfer reports a code libcurl can name. */
    nsys_curl *h = curl->easy_init();
    CHECK(h != NULL);
    if (h) {
      CHECK_EQ(curl->easy_setopt(h, NSYS_CURLOPT_URL, "http://127.0.0.1:1/"), NSYS_CURLE_OK);
      CHECK_EQ(curl->easy_setopt(h, NSYS_CURLOPT_CONNECTTIMEOUT_MS, 2000L), NSYS_CURLE_OK);
      int rc = curl->easy_perform(h);
      CHECK_EQ(rc, NSYS_CURLE_COULDNT_CONNECT);
      long status = -1;
      CHECK_EQ(curl->easy_getinfo(h, NSYS_CURLINFO_RESPONSE_CODE, &status), NSYS_CURLE_OK);
      CHECK_EQ(status, 0);
      CHECK(strlen(curl->easy_strerror(rc)) > 0);
      curl->easy_cleanup(h);
    }
    nsys_curl_slist *l = curl->slist_append(NULL, "A: b");
    CHECK(l != NULL);
    curl->slist_free_all(l);
  }
  return nsys_check_done("curl_dl");
}
