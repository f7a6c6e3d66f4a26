/* libFuzzer target: the analysis memo file (analysis/amemo_file.c) on
 * mutated files. Each input becomes the memo file of a scratch export (made
 * once, fuzz_cache_profile.h, its index cache left valid). The harness keeps
 * the header's identity part (magic, versions, the profile's identity, the
 * index's counts and span, the track and class hashes: a memcmp in the
 * loader, tested in tests/c/analysis/test_amemo.c) from the valid file and
 * lets the input choose the device count and the payload; payload size and
 * checksum are made right, so that mutations reach the payload's parser and
 * its consistency checks. Then the report and the analyses run on the
 * profile: a file the loader accepts must be one they can use; one it
 * refuses is rebuilt. Any crash, leak, UB or hang is a bug. The first run
 * writes the valid memo file into the corpus folder as the seed. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_cache_profile.h"
#include "index/index_cache_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char *nsys__memo_path;
static unsigned char *nsys__valid;
static uint32_t nsys__hsize;

enum { NSYS__N_DEV_AT = 20 }; /* magic[8], version, header_size, index_version, n_dev */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  nsys__fz_make_profile("memo");
  nsys_task task;
  nsys_task_init(&task);
  nsys_profile *p = nsys_profile_open(nsys__fz_profile, &task);
  const nsys_index *ix = p ? nsys_index_get(p, &task) : NULL;
  if (!ix) abort();
  nsys_aresult_free(nsys_analysis_exec(&task, p, ix, "overlap", NULL, NULL)); /* builds and saves the memo */
  nsys_index_wait_saves();
  uint64_t h = 0;
  nsys__memo_path = nsys_profile_cache_file(p, "memo", &h);
  nsys_profile_release(p);
  size_t n = 0;
  nsys__valid = nsys__memo_path ? nsys__fz_slurp(nsys__memo_path, &n) : NULL;
  if (!nsys__valid || n < 24) abort();
  memcpy(&nsys__hsize, nsys__valid + 12, 4);
  if (nsys__hsize < 40 || nsys__hsize > n || nsys__hsize % 8) abort();
  nsys__fz_seed(*argc, *argv, "valid-memo", nsys__valid, n);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (4u << 20)) return 0;
  unsigned char *file = nsys__fz_copy(data, size);
  if (size >= nsys__hsize) {
    uint32_t n_dev;
    memcpy(&n_dev, file + NSYS__N_DEV_AT, 4);
    memcpy(file, nsys__valid, nsys__hsize);
    memcpy(file + NSYS__N_DEV_AT, &n_dev, 4);
    uint64_t payload = size - nsys__hsize, sum = 0;
    if (payload % 8 == 0) {
      nsys__sum s;
      memset(&s, 0, sizeof s);
      uint64_t *words = malloc(payload + 8);
      if (!words) abort();
      if (payload) memcpy(words, file + nsys__hsize, payload);
      nsys__sum_words(&s, words, payload / 8);
      sum = nsys__sum_final(&s);
      free(words);
    }
    memcpy(file + nsys__hsize - 16, &payload, 8);
    memcpy(file + nsys__hsize - 8, &sum, 8);
  }
  nsys__fz_write(nsys__memo_path, file, size);
  free(file);
  nsys_task task;
  nsys_task_init(&task);
  nsys_profile *p = nsys_profile_open(nsys__fz_profile, &task);
  if (!p) abort();
  const nsys_index *ix = nsys_index_get(p, &task);
  if (!ix) abort();
  nsys__fz_use(p, ix);
  nsys_index_wait_saves();
  nsys_profile_release(p);
  return 0;
}
