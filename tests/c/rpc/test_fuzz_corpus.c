/* Replays every file of the fuzz corpus (fuzz/rpc/corpus: real messages plus
 * any input that ever crashed the fuzzer) through the libFuzzer entry point
 * in the ordinary build, so the cases run under ASan/UBSan and valgrind too.
 * A crash found by fuzzing becomes a regression test by adding its file. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *nsys__slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      cap = cap ? cap * 2 : 4096;
      buf = realloc(buf, cap);
      if (!buf) abort();
    }
    size_t k = fread(buf + len, 1, cap - len, f);
    if (!k) break;
    len += k;
  }
  fclose(f);
  *n = len;
  return buf;
}

int main(int argc, char **argv) {
  int files = 0;
  for (int a = 1; a < argc; a++) {
    DIR *d = opendir(argv[a]);
    if (!d) {
      fprintf(stderr, "test_fuzz_corpus: cannot open %s\n", argv[a]);
      return 1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
      size_t n = 0;
      unsigned char *data = nsys__slurp(path, &n);
      if (!data) continue;
      LLVMFuzzerTestOneInput(data, n);
      /* and every prefix chunking the fuzzer might not have tried */
      for (size_t cut = 2; cut < n; cut += 1 + n / 16) LLVMFuzzerTestOneInput(data, cut);
      free(data);
      files++;
    }
    closedir(d);
  }
  fprintf(stderr, "test_fuzz_corpus: %d inputs replayed\n", files);
  return files > 0 ? 0 : 1;
}
