/* libFuzzer target: the profile loader on mutated SQLite files.
 * Each input is written to a scratch file and opened with
 * nsys_profile_open() (schema detection, strings, info), then a few string
 * lookups run and the profile is released. Any crash, leak, UB or hang is a
 * bug; an error result (-32003/-32004/-32016) is fine. Seeds come from
 * fuzz_loader.seeds.py (small nsys-like exports of every generation). */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "profile/profile.h"
#include "common/task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char nsys__dir[64];
static char nsys__path[128];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  snprintf(nsys__dir, sizeof nsys__dir, "/tmp/nsys-ai-fuzz-loader-XXXXXX");
  if (!mkdtemp(nsys__dir)) abort();
  snprintf(nsys__path, sizeof nsys__path, "%s/input.sqlite", nsys__dir);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (8u << 20)) return 0;
  int fd = open(nsys__path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) abort();
  size_t off = 0;
  while (off < size) {
    ssize_t n = write(fd, data + off, size - off);
    if (n <= 0) abort();
    off += (size_t)n;
  }
  close(fd);
  nsys_task task;
  nsys_task_init(&task);
  nsys_profile *p = nsys_profile_open(nsys__path, &task);
  if (p) {
    for (int64_t id = -2; id < 8; id++) (void)nsys_profile_string(p, id);
    (void)nsys_profile_check_unchanged(p, &task);
    nsys_profile_release(p);
  }
  return 0;
}
