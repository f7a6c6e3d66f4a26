/* The source map over a hand-built index: innermost tag wins, tags beat
 * module-path ranges, definitions from a temporary workspace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "index/index.h"
#include "source/defs.h"
#include "source/source_map.h"
#include "../common/nsys_check.h"


#define S(ix, s) nsys_strtab_intern(&(ix)->strings, (s), strlen(s))

int main(void) {
  /* workspace */
  char root[] = "/tmp/nsys-src-test-XXXXXX";
  if (!mkdtemp(root)) return 2;
  char *real = realpath(root, NULL);
  char *kfile = nsys_xasprintf("%s/k.cu", real);
  char *pyfile = nsys_xasprintf("%s/model.py", real);
  FILE *f = fopen(kfile, "w");
  fputs("// kernels\n__global__ void mykernel(int x) {\n}\n", f);
  fclose(f);
  f = fopen(pyfile, "w");
  fputs("class M:\n    def __init__(self):\n        self.mlp = Mlp()\n        self.fc = nn.Linear(4, 4)\n", f);
  fclose(f);

  nsys_index ix;
  memset(&ix, 0, sizeof ix);
  nsys_strtab_init(&ix.strings);
  /* one thread, four NVTX ranges */
  nsys_host_thread th = {.pid = 1, .tid = 1, .nvtx_first = 0, .nvtx_count = 4, .api_first = 0,
                         .api_count = 4};
  ix.threads = &th;
  ix.n_threads = 1;
  int64_t ns[] = {0, 100, 150, 600}, ne[] = {1000, 500, 200, 900};
  uint32_t nname[4] = {S(&ix, "train.py:10 step"), S(&ix, "train.py:12 fwd"),
                       S(&ix, "aten::linear, seq = 1, op_id = 2"), S(&ix, "Block (model.layers.0.mlp)")};
  uint32_t nthr[4] = {0, 0, 0, 0}, ndom[4] = {0, 0, 0, 0};
  uint16_t ndep[4] = {0, 1, 2, 1};
  int32_t npar[4] = {-1, 0, 1, 0};
  ix.nvtx = (nsys_nvtx_ranges){4, ns, ne, nname, ndom, nthr, ndep, npar};
  /* API calls */
  int64_t as[] = {160, 700, 1500, 2000}, ae[] = {170, 710, 1510, 2010};
  uint32_t aname[4], athr[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; i++) aname[i] = S(&ix, "cudaLaunchKernel");
  int32_t afirst[4] = {0, 2, 3, 4};
  int64_t acorr[4] = {1, 2, 3, 4}, arow[4] = {1, 2, 3, 4};
  ix.api = (nsys_api_calls){4, as, ae, aname, athr, afirst, acorr, arow};
  /* GPU ops: k0,k1 from a0; k2 from a1; k3 from a2; k4 (memcpy) from a3 */
  int64_t os[] = {1000, 2000, 3000, 4000, 5000}, oe[] = {1100, 2300, 3500, 4700, 5100};
  uint32_t on[5] = {S(&ix, "gemm"), S(&ix, "relu"), S(&ix, "gemm"), S(&ix, "mykernel"),
                    S(&ix, "[CUDA memcpy HtoD]")};
  uint32_t ofn[5] = {S(&ix, "gemm"), S(&ix, "relu"), S(&ix, "gemm"), S(&ix, "void mykernel(int)"),
                     S(&ix, "[CUDA memcpy HtoD]")};
  uint32_t otr[5] = {0};
  int32_t oapi[5] = {0, 0, 1, 2, 3};
  int64_t orow[5] = {1, 2, 3, 4, 1};
  uint8_t okind[5] = {NSYS_OP_KERNEL, NSYS_OP_KERNEL, NSYS_OP_KERNEL, NSYS_OP_KERNEL, NSYS_OP_MEMCPY};
  ix.ops = (nsys_ops){5, os, oe, on, ofn, otr, oapi, orow, okind};
  int32_t onext[5] = {1, -1, -1, -1, -1};
  ix.op_next = onext;

  nsys_defs *defs = nsys_defs_build(real, NULL);
  CHECK_MSG(defs->n_files == 2, "scanned %u files", defs->n_files);
  nsys_src_map *m = nsys_src_map_build(NULL, &ix, defs, NULL);
  CHECK_MSG(m != NULL, "map built");
  if (m) {
    CHECK_MSG(m->n_kernels == 4 && m->gpu_ns == 100 + 300 + 500 + 700, "kernels %u gpu %lld", m->n_kernels,
              (long long)m->gpu_ns);
    /* innermost tag wins (the aten range in between is not a tag) */
    for (int k = 0; k < 2; k++) {
      CHECK_MSG(m->op_launch[k] >= 0 && m->sites[m->op_launch[k]].line == 12, "k%d -> line 12", k);
    }
    /* a tagged ancestor beats a module-path range */
    CHECK_MSG(m->op_launch[2] >= 0 && m->sites[m->op_launch[2]].line == 10 &&
              m->sites[m->op_launch[2]].strategy == NSYS_SRC_TAG,
              "k2 -> tag line 10");
    CHECK_MSG(m->op_launch[3] == -1, "k3 has no launch site");
    CHECK_MSG(m->op_def[3] >= 0 && m->sites[m->op_def[3]].line == 2 &&
              strcmp(nsys_strtab_get(&m->strs, m->sites[m->op_def[3]].file), "k.cu") == 0,
              "k3 -> k.cu:2");
    CHECK_MSG(m->op_launch[4] == -1 && m->op_def[4] == -1, "memcpy not mapped");
    const nsys_src_line *l = nsys_src_map_at(m, "train.py", 12);
    CHECK_MSG(l && l->total_ns == 400 && l->kernels == 2 && l->count == 2, "train.py:12");
    l = nsys_src_map_at(m, "train.py", 11);
    CHECK_MSG(l == NULL, "no line 11");
    char *abs = nsys_xasprintf("%s/k.cu", real);
    l = nsys_src_map_at(m, abs, 2);
    CHECK_MSG(l && l->total_ns == 700, "absolute path lookup");
    free(abs);
    CHECK_MSG(m->strategy_ns[NSYS_SRC_TAG] == 900 && m->strategy_ns[NSYS_SRC_DEFINITION] == 700,
              "strategy totals %lld %lld", (long long)m->strategy_ns[NSYS_SRC_TAG],
              (long long)m->strategy_ns[NSYS_SRC_DEFINITION]);
    nsys_src_map_free(m);
  }
  /* without the outer tag, the module-path range maps k2 to self.mlp */
  nname[0] = S(&ix, "step");
  m = nsys_src_map_build(NULL, &ix, defs, NULL);
  if (m) {
    CHECK_MSG(m->op_launch[2] >= 0 && m->sites[m->op_launch[2]].strategy == NSYS_SRC_MODULE &&
              m->sites[m->op_launch[2]].line == 3,
              "k2 -> module model.py:3");
    nsys_src_map_free(m);
  }
  /* without any tag, the aten::linear range maps k0 to the nn.Linear attribute */
  nname[1] = S(&ix, "fwd");
  m = nsys_src_map_build(NULL, &ix, defs, NULL);
  if (m) {
    CHECK_MSG(m->op_launch[0] >= 0 && m->sites[m->op_launch[0]].strategy == NSYS_SRC_MODULE &&
              m->sites[m->op_launch[0]].line == 4 && m->sites[m->op_launch[0]].confidence < 0.3f,
              "k0 -> nn.Linear at model.py:4");
    nsys_src_map_free(m);
  }
  /* a pyprof-style marker naming model.py:22 inside a tag naming line 20: the
   * kernels launched in the marker belong to line 22 (conv2), not 20 */
  nname[0] = S(&ix, "model.py:20 forward");
  nname[1] = S(&ix, "{'op': 'conv2d', 'traceMarker': ['train.py:40', 'model.py:22']}");
  m = nsys_src_map_build(NULL, &ix, defs, NULL);
  if (m) {
    for (int k = 0; k < 2; k++)
      CHECK_MSG(m->op_launch[k] >= 0 && m->sites[m->op_launch[k]].line == 22 &&
                    strcmp(nsys_strtab_get(&m->strs, m->sites[m->op_launch[k]].file), "model.py") == 0,
                "k%d -> embedded model.py:22", k);
    CHECK_MSG(m->op_launch[2] >= 0 && m->sites[m->op_launch[2]].line == 20, "k2 -> outer tag line 20");
    nsys_src_map_free(m);
  }
  /* without a workspace the last location in the text wins; "a:1" without a
   * source extension and "aten::x" are not locations */
  nname[1] = S(&ix, "conv1 @net.py:7, from train.py:40; step:3");
  m = nsys_src_map_build(NULL, &ix, NULL, NULL);
  if (m) {
    CHECK_MSG(m->op_launch[0] >= 0 && m->sites[m->op_launch[0]].line == 40 &&
                  strcmp(nsys_strtab_get(&m->strs, m->sites[m->op_launch[0]].file), "train.py") == 0,
              "k0 -> train.py:40");
    nsys_src_map_free(m);
  }
  /* a tag whose path has spaces: taken when the workspace has that file;
   * "see model.py:3 for" is free text naming model.py:3, never "see model.py" */
  char *spdir = nsys_xasprintf("%s/My Project", real), *spfile = nsys_xasprintf("%s/My Project/train.py", real);
  mkdir(spdir, 0700);
  f = fopen(spfile, "w");
  fputs("def step():\n    pass\n", f);
  fclose(f);
  nsys_defs *defs2 = nsys_defs_build(real, NULL);
  nname[3] = S(&ix, "My Project/train.py:2 step");
  nname[1] = S(&ix, "see model.py:3 for the layer");
  nname[0] = S(&ix, "Other Project/train.py:5 step"); /* not a workspace file */
  m = nsys_src_map_build(NULL, &ix, defs2, NULL);
  if (m) {
    CHECK_MSG(m->op_launch[2] >= 0 && m->sites[m->op_launch[2]].strategy == NSYS_SRC_TAG &&
                  m->sites[m->op_launch[2]].line == 2 &&
                  strcmp(nsys_strtab_get(&m->strs, m->sites[m->op_launch[2]].file), "My Project/train.py") == 0,
              "k2 -> My Project/train.py:2");
    for (int k = 0; k < 2; k++)
      CHECK_MSG(m->op_launch[k] >= 0 && m->sites[m->op_launch[k]].line == 3 &&
                    strcmp(nsys_strtab_get(&m->strs, m->sites[m->op_launch[k]].file), "model.py") == 0,
                "k%d -> model.py:3 named in free text", k);
    const nsys_src_line *l = nsys_src_map_at(m, "see model.py", 3);
    CHECK_MSG(l == NULL, "no site at 'see model.py'");
    bool other = false;
    for (uint32_t i = 0; i < m->n_sites; i++)
      other |= strcmp(nsys_strtab_get(&m->strs, m->sites[i].file), "Other Project/train.py") == 0;
    CHECK_MSG(!other, "a spaced path outside the workspace is not a tag");
    nsys_src_map_free(m);
  }
  nsys_defs_free(defs2);
  unlink(spfile);
  rmdir(spdir);
  free(spfile);
  free(spdir);
  nsys_defs_free(defs);
  nsys_strtab_free(&ix.strings);
  unlink(kfile);
  unlink(pyfile);
  rmdir(real);
  free(kfile);
  free(pyfile);
  free(real);
  return nsys_check_done("source_map");
}
