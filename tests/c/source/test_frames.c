/* Backtrace frames against a workspace: a native frame whose function holds
 * a launch line of the kernel is confirmed by it; two functions of the same
 * name are told apart by the launch line, then by the binary's name; native
 * frames never resolve to Python defs; Python frames on a launch line
 * (torch.ops only when the op is the kernel). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "source/defs.h"
#include "source/frames.h"
#include "../common/nsys_check.h"

static char *nsys__write(const char *root, const char *name, const char *text) {
  char *path = nsys_xasprintf("%s/%s", root, name);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return path;
}

int main(void) {
  char tmpl[] = "/tmp/nsys-frames-test-XXXXXX";
  if (!mkdtemp(tmpl)) return 2;
  char *root = realpath(tmpl, NULL);
#define NSYS__EX(CFG)                                                          \
  "__global__ void vecAdd(float *a, int n) {\n" /* 1 */                        \
  "  a[0] = 1;\n"                               /* 2 */                        \
  "}\n"                                         /* 3 */                        \
  "int main()\n"                                /* 4 */                        \
  "{\n"                                         /* 5 */                        \
  "  vecAdd<<<" CFG ">>>(0, 0);\n"              /* 6 */                        \
  "  return 0;\n"                               /* 7 */                        \
  "}\n"                                         /* 8 */                        \
  "void helper() { other_kernel<<<1, 1>>>(0); }\n" /* 9 */
  const char *t1 = NSYS__EX("(n + 255) / 256, 256"), *t2 = NSYS__EX("264, 1024, 0, s");
  char *files[4] = {nsys__write(root, "ex1.cu", t1), nsys__write(root, "ex2.cu", t2),
                    nsys__write(root, "tool.py", "def main():\n    pass\n"),
                    nsys__write(root, "ops.py",
                                "import torch\n"
                                "def f(x):\n"
                                "    y = torch.ops.myns.myop(x)\n"
                                "    return torch.ops.myns.other.default(y)\n")};
  nsys_defs *d = nsys_defs_build(root, NULL);
  nsys_frame_site fs;
  /* the binary names ex1: its main, confirmed by its launch line 6 */
  CHECK_MSG(nsys_native_frame_site(d, "main", "/home/u/build/vecadd_ex1", "vecAdd", &fs), "resolved");
  CHECK_MSG(strcmp(nsys_strtab_get(&d->strs, fs.file), "ex1.cu") == 0 && fs.line == 6 && fs.launch == 6 &&
                fs.confidence > 0.85f,
            "ex1.cu:6 (%s:%d launch %d %.2f) %s", nsys_strtab_get(&d->strs, fs.file), fs.line, fs.launch,
            (double)fs.confidence, fs.evidence);
  CHECK_MSG(strstr(fs.evidence, "launches vecAdd at line 6") && strstr(fs.evidence, "the likeliest of 2"),
            "evidence: %s", fs.evidence);
  CHECK_MSG(nsys_native_frame_site(d, "main", "./vecadd_ex2", "vecAdd", &fs) &&
                strcmp(nsys_strtab_get(&d->strs, fs.file), "ex2.cu") == 0 && fs.line == 6,
            "ex2.cu:6");
  /* nothing tells the two mains apart: neither at full confidence */
  CHECK_MSG(nsys_native_frame_site(d, "main", "/bin/a.out", "vecAdd", &fs) && fs.confidence < 0.5f &&
                strstr(fs.evidence, "nothing tells them apart"),
            "ambiguous: %.2f %s", (double)fs.confidence, fs.evidence);
  /* a kernel main does not launch: the function's line, not confirmed */
  CHECK_MSG(nsys_native_frame_site(d, "helper", NULL, "vecAdd", &fs) && fs.launch == 0 && fs.line == 9 &&
                fs.confidence <= 0.6f,
            "helper, unconfirmed");
  CHECK_MSG(nsys_native_frame_site(d, "helper", "vecadd_ex2", "other_kernel", &fs) && fs.launch == 9 &&
                strcmp(nsys_strtab_get(&d->strs, fs.file), "ex2.cu") == 0,
            "helper confirmed");
  CHECK_MSG(nsys_native_frame_site(d, "helper", NULL, "other_kernel", &fs) && fs.launch == 0 &&
                fs.confidence < 0.5f,
            "two helpers that both launch it: a tie");
  /* a native frame never maps to a Python def of the same name */
  CHECK_MSG(!nsys_native_frame_site(d, "f", NULL, "myop", &fs), "no native f");
  /* Python frames: on a launch line of the kernel (the op is the kernel's
   * name), or just the frame's line */
  CHECK_MSG(nsys_python_frame_site(d, "ops.py", 3, "myop", &fs) && fs.launch == 3 && fs.confidence > 0.9f,
            "torch.ops.myns.myop confirms myop");
  CHECK_MSG(nsys_python_frame_site(d, "ops.py", 3, "myop_kernel", &fs) && fs.launch == 0 && fs.line == 3,
            "torch.ops.myns.myop does not confirm another kernel");
  CHECK_MSG(nsys_python_frame_site(d, "ops.py", 4, "other", &fs) && fs.launch == 4, "torch.ops ... .default");
  CHECK_MSG(!nsys_python_frame_site(d, "site-packages/torch/nn/modules/linear.py", 125, "myop", &fs),
            "not a workspace file");
  CHECK_MSG(!nsys_python_frame_site(d, "ops.py", 0, "myop", &fs), "line 0");
  nsys_defs_free(d);
  for (int i = 0; i < 4; i++) {
    unlink(files[i]);
    free(files[i]);
  }
  rmdir(root);
  free(root);
  return nsys_check_done("frames");
}
