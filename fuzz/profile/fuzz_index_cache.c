/* libFuzzer target: the index cache file (index/index_cache_load.c) on
 * mutated files. Each input becomes the cache file of a scratch export (made
 * once, fuzz_cache_profile.h); the harness makes the file's identity fields
 * (the export's device, inode, size, mtime, path hash) and its checksum right,
 * so that mutations reach the layout, the string table and the structure
 * checks rather than stopping at the checksum (the identity and checksum
 * tests themselves are in tests/c/index/test_index_cache.c). The profile is
 * then opened and indexed: a file the loader accepts is put through every
 * reader of the index (timeline rows, NVTX trees, the analyses, the report);
 * one it refuses is rebuilt from SQL. Any crash, leak, UB or hang is a bug.
 * The first run writes the valid cache file of the scratch export into the
 * corpus folder as the seed. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_cache_profile.h"
#include "index/index_cache_format.h"
#include "index/index_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char *nsys__cache_path;
static nsys__cache_header nsys__valid;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  nsys__fz_make_profile("index-cache");
  nsys_task task;
  nsys_task_init(&task);
  nsys_profile *p = nsys_profile_open(nsys__fz_profile, &task);
  if (!p || !nsys_index_get(p, &task)) abort();
  nsys_index_wait_saves();
  uint64_t h = 0;
  nsys__cache_path = nsys_profile_cache_file(p, "index", &h);
  nsys_profile_release(p);
  size_t n = 0;
  unsigned char *file = nsys__cache_path ? nsys__fz_slurp(nsys__cache_path, &n) : NULL;
  if (!file || n < sizeof nsys__valid) abort();
  memcpy(&nsys__valid, file, sizeof nsys__valid);
  nsys__fz_seed(*argc, *argv, "valid-index-cache", file, n);
  free(file);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (4u << 20)) return 0;
  unsigned char *file = nsys__fz_copy(data, size);
  if (size >= sizeof nsys__valid) {
    nsys__cache_header hd;
    memcpy(&hd, file, sizeof hd);
    hd.dev = nsys__valid.dev;
    hd.ino = nsys__valid.ino;
    hd.size = nsys__valid.size;
    hd.mtime_ns = nsys__valid.mtime_ns;
    hd.path_hash = nsys__valid.path_hash;
    memcpy(file, &hd, sizeof hd);
  }
  nsys__fz_write(nsys__cache_path, file, size);
  free(file);
  (void)nsys__cache_reseal(nsys__cache_path);
  nsys_task task;
  nsys_task_init(&task);
  nsys_profile *p = nsys_profile_open(nsys__fz_profile, &task);
  if (!p) abort(); /* the export itself never changes */
  const nsys_index *ix = nsys_index_get(p, &task);
  if (!ix) abort(); /* a refused cache is rebuilt, never an error */
  if (nsys_index_from_cache(ix)) nsys__fz_use(p, ix);
  nsys_index_wait_saves();
  nsys_profile_release(p);
  return 0;
}
