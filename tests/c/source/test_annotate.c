/* Table-driven tests of the Python scanner and the NVTX annotator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/annotate.h"
#include "source/defs.h"
#include "source/pyscan.h"
#include "../common/nsys_check.h"

/* ---- scanner: statement starts and kinds ---- */

typedef struct {
  const char *name;
  const char *src;
  int n_stmts;
  const char *firsts; /* first lines (0-based) of statements, comma separated */
} scan_case;

static const scan_case scan_cases[] = {
    {"simple", "a = 1\nb = 2\n", 2, "0,1"},
    {"triple string spans lines", "x = '''a\nb = 2\n'''\ny = 3\n", 2, "0,3"},
    {"brackets", "f(1,\n  2)\ng()\n", 2, "0,2"},
    {"backslash", "a = 1 + \\\n  2\nb = 3\n", 2, "0,2"},
    {"comments and blanks", "# c\n\n  # indented comment\na = 1  # x\n", 1, "3"},
    {"fstring nested quotes", "s = f\"{x[\"k\"]} {y:>{w}}\"\nt = 1\n", 2, "0,1"},
    {"fstring braces", "s = f'{{not code'\nt = 1\n", 2, "0,1"},
    {"def and body", "def f(x):\n    return x\n", 2, "0,1"},
    {"decorator", "@d(1)\ndef f():\n    pass\n", 3, "0,1,2"},
    {"string prefix rb", "x = rb'\\''\ny = 2\n", 2, "0,1"},
    {"unterminated string recovers", "x = 'abc\ny = 2\n", 2, "0,1"},
    {"crlf", "a = 1\r\nb = 2\r\n", 2, "0,1"},
    {"cr only", "a = 1\rb = 2\r", 2, "0,1"},
    {"escaped newline in string", "x = 'a\\\nb'\ny = 1\n", 2, "0,2"},
    {"semicolons", "a = 1; b = 2\nc = 3\n", 2, "0,1"},
    {"no final newline", "a = 1\nb = 2", 2, "0,1"},
    {"bom", "\xEF\xBB\xBF" "a = 1\nb = 2\n", 2, "0,1"},
};

static void test_scan(void) {
  for (size_t i = 0; i < sizeof scan_cases / sizeof scan_cases[0]; i++) {
    const scan_case *c = &scan_cases[i];
    nsys_py_file f;
    nsys_py_scan(&f, c->src, strlen(c->src));
    CHECK_MSG(f.n_stmts == c->n_stmts, "%s: %d statements, want %d", c->name, f.n_stmts, c->n_stmts);
    char got[128] = "";
    for (int s = 0; s < f.n_stmts; s++) {
      char b[16];
      snprintf(b, sizeof b, s ? ",%d" : "%d", f.stmts[s].first_line);
      strcat(got, b);
    }
    CHECK_MSG(strcmp(got, c->firsts) == 0, "%s: first lines %s, want %s", c->name, got, c->firsts);
    nsys_py_free(&f);
  }
}

static void test_structure(void) {
  const char *src =
      "class A:\n"                 /* 0 */
      "    def f(self, x):\n"      /* 1 */
      "        \"\"\"doc\"\"\"\n"  /* 2 */
      "        if x: return 1\n"   /* 3 */
      "        for i in r(x):\n"   /* 4 */
      "            y = g(i)\n"     /* 5 */
      "        else:\n"            /* 6 */
      "            y = 0\n"        /* 7 */
      "        return y\n"         /* 8 */
      "async def h():\n"           /* 9 */
      "    async with l:\n"        /* 10 */
      "        await z()\n"        /* 11 */
      "match = 3\n"                /* 12 */
      "match x:\n"                 /* 13 */
      "    case 1:\n"              /* 14 */
      "        pass\n";            /* 15 */
  nsys_py_file f;
  nsys_py_scan(&f, src, strlen(src));
  CHECK_MSG(f.n_stmts == 16, "%d statements", f.n_stmts);
  if (f.n_stmts == 16) {
    CHECK_MSG(f.stmts[0].kind == NSYS_PY_CLASS && strcmp(f.stmts[0].name, "A") == 0, "class");
    CHECK_MSG(f.stmts[1].kind == NSYS_PY_DEF && strcmp(f.stmts[1].name, "f") == 0 && f.stmts[1].parent == 0,
              "method");
    CHECK_MSG(f.stmts[2].kind == NSYS_PY_STRING, "docstring kind %d", f.stmts[2].kind);
    CHECK_MSG(f.stmts[3].kind == NSYS_PY_IF && f.stmts[3].inline_body && !f.stmts[3].opens_block, "inline if");
    CHECK_MSG(f.stmts[4].kind == NSYS_PY_FOR && f.stmts[4].opens_block && f.stmts[4].header_call, "for");
    CHECK_MSG(f.stmts[5].parent == 4 && strcmp(f.stmts[5].name, "g") == 0 && f.stmts[5].has_call, "for body");
    CHECK_MSG(f.stmts[6].kind == NSYS_PY_ELSE && f.stmts[6].parent == 1, "else");
    CHECK_MSG(nsys_py_unit_end(&f, 4) == 7, "for unit includes else: %d", nsys_py_unit_end(&f, 4));
    CHECK_MSG(f.stmts[1].block_end == 8, "def block end %d", f.stmts[1].block_end);
    CHECK_MSG(f.stmts[0].block_end == 8, "class block end %d", f.stmts[0].block_end);
    CHECK_MSG(f.stmts[9].kind == NSYS_PY_DEF && strcmp(f.stmts[9].name, "h") == 0, "async def");
    CHECK_MSG(f.stmts[10].kind == NSYS_PY_WITH && f.stmts[10].parent == 9, "async with");
    CHECK_MSG(f.stmts[12].kind == NSYS_PY_SIMPLE, "match as a name");
    CHECK_MSG(f.stmts[13].kind == NSYS_PY_MATCH && f.stmts[13].opens_block, "match statement");
    CHECK_MSG(f.stmts[14].kind == NSYS_PY_CASE && f.stmts[14].parent == 13, "case");
  }
  nsys_py_free(&f);
}

/* ---- annotate / unannotate ---- */

typedef struct {
  const char *name;
  const char *src;
  nsys_annot_scope scope;
  const char *function;
  int l0, l1;
  bool statement;
  int want_markers;      /* -1: don't check */
  const char *must_contain;
} annot_case;

static const annot_case annot_cases[] = {
    {"function body", "def f(x):\n    y = g(x)\n    return y\n", NSYS_ANNOT_FUNCTION, "f", 0, 0, false, 1,
     "import torch  # nsys-ai\ndef f(x):\n    with torch.cuda.nvtx.range(\"t.py:2 f\"):  # nsys-ai\n"
     "        y = g(x)\n        return y\n"},
    {"docstring stays first", "def f():\n    \"\"\"doc\"\"\"\n    g()\n", NSYS_ANNOT_FUNCTION, "f", 0, 0, false, 1,
     "    \"\"\"doc\"\"\"\n    with torch.cuda.nvtx.range(\"t.py:2 f\"):  # nsys-ai\n        g()\n"},
    {"future import first", "from __future__ import annotations\ndef f():\n    g()\n", NSYS_ANNOT_FILE, NULL, 0,
     0, false, 1, "from __future__ import annotations\nimport torch  # nsys-ai\n"},
    {"nvtx package", "import nvtx\ndef f():\n    g()\n", NSYS_ANNOT_FILE, NULL, 0, 0, false, 1,
     "    with nvtx.annotate(\"t.py:2 f\"):  # nsys-ai\n"},
    {"statements", "import torch\ndef f(x):\n    a = g(x)\n    b = a @ a\n    pass\n    return b\n",
     NSYS_ANNOT_FUNCTION, "f", 0, 0, true, 2, "(\"t.py:4 g\")"},
    {"multiline string not reindented", "def f():\n    x = g('''a\nb''')\n", NSYS_ANNOT_FILE, NULL, 0, 0,
     false, 1, "        x = g('''a\nb''')\n"},
    {"one-line def skipped", "def f(): return g()\n", NSYS_ANNOT_FILE, NULL, 0, 0, false, 0, NULL},
    {"tabs", "def f():\n\tif x:\n\t\tg()\n", NSYS_ANNOT_FILE, NULL, 0, 0, true, 1, "\tif x:\n\t\twith "},
    {"line range", "def f():\n    a()\n    b()\n    c()\n", NSYS_ANNOT_LINES, NULL, 1, 2, false, 1,
     "    with torch.cuda.nvtx.range(\"t.py:4 a\"):  # nsys-ai\n        a()\n        b()\n    c()\n"},
    {"class body only methods", "class A:\n    x = f()\n    def m(self):\n        g()\n", NSYS_ANNOT_FILE, NULL, 0,
     0, true, 1, "    x = f()\n"},
    {"bom moves to first line", "\xEF\xBB\xBF" "g()\n", NSYS_ANNOT_FILE, NULL, 0, 0, true, 1,
     "\xEF\xBB\xBF" "import torch  # nsys-ai\n"},
    /* fuzz_annotate regression: a doubled BOM lost one BOM on the way back */
    {"doubled bom", "\xEF\xBB\xBF" "\xEF\xBB\xBF" "[[", NSYS_ANNOT_FILE, NULL, 0, 0, true, -1, NULL},
    /* fuzz_annotate regressions: text Python would not accept is left untouched */
    {"unclosed bracket", "def f(x):\n  g([\ndef k(x", NSYS_ANNOT_FILE, NULL, 0, 0, true, 0, NULL},
    {"invalid utf-8", "def f(x\x8c):\n    g()\n", NSYS_ANNOT_FILE, NULL, 0, 0, true, 0, NULL},
    {"quote in path label", "def f():\n    g()\n", NSYS_ANNOT_FUNCTION, "f", 0, 0, false, 1, NULL},
    {"missing function", "def f():\n    g()\n", NSYS_ANNOT_FUNCTION, "nope", 0, 0, false, 0, NULL},
};

static void roundtrip(const char *name, const char *src, size_t n, const nsys_annotate_opts *o,
                      int want_markers, const char *must_contain) {
  nsys_annotate_result r;
  int rc = nsys_annotate(src, n, o, &r);
  if (want_markers >= 0)
    CHECK_MSG(r.n_markers == want_markers, "%s: %d markers, want %d", name, r.n_markers, want_markers);
  if (o->scope == NSYS_ANNOT_FUNCTION && o->function && strcmp(o->function, "nope") == 0)
    CHECK_MSG(rc == -1, "%s: missing function must return -1", name);
  if (must_contain)
    CHECK_MSG(strstr(r.new_text, must_contain) != NULL, "%s: result lacks [%s]:\n%s", name, must_contain,
              r.new_text);
  if (r.n_markers == 0) CHECK_MSG(r.n_edits == 0 && r.new_len == n, "%s: edits without markers", name);
  /* idempotent */
  nsys_annotate_result r2;
  nsys_annotate(r.new_text, r.new_len, o, &r2);
  if (o->scope != NSYS_ANNOT_LINES)
    CHECK_MSG(r2.n_markers == 0 && r2.n_edits == 0, "%s: second annotate added %d", name, r2.n_markers);
  nsys_annotate_result_free(&r2);
  /* reversible */
  nsys_annotate_result u;
  nsys_unannotate(r.new_text, r.new_len, &u);
  CHECK_MSG(u.new_len == n && memcmp(u.new_text, src, n) == 0, "%s: round trip differs:\n%s", name, u.new_text);
  nsys_annotate_result_free(&u);
  nsys_annotate_result_free(&r);
}

static void test_annotate(void) {
  for (size_t i = 0; i < sizeof annot_cases / sizeof annot_cases[0]; i++) {
    const annot_case *c = &annot_cases[i];
    nsys_annotate_opts o = {.rel_path = strstr(c->name, "quote") ? "we\"ird\\.py" : "t.py",
                            .scope = c->scope, .function = c->function, .start_line = c->l0,
                            .end_line = c->l1, .statement = c->statement};
    roundtrip(c->name, c->src, strlen(c->src), &o, c->want_markers, c->must_contain);
  }
  /* the quoted path is escaped */
  nsys_annotate_opts o = {.rel_path = "we\"ird\\.py", .scope = NSYS_ANNOT_FILE};
  nsys_annotate_result r;
  nsys_annotate("def f():\n    g()\n", 17, &o, &r);
  CHECK_MSG(strstr(r.new_text, "(\"we\\\"ird\\\\.py:2 f\")") != NULL, "escaping: %s", r.new_text);
  nsys_annotate_result_free(&r);
}

static void test_edits(void) {
  /* edits are whole-line hunks; the last unterminated line ends at its UTF-16 length */
  const char *src = "import torch\ndef f():\n    g('\xC3\xA9\xF0\x9D\x84\x9E')";
  nsys_annotate_opts o = {.rel_path = "t.py", .scope = NSYS_ANNOT_FILE};
  nsys_annotate_result r;
  nsys_annotate(src, strlen(src), &o, &r);
  CHECK_MSG(r.n_edits == 1, "%d edits", r.n_edits);
  if (r.n_edits == 1) {
    CHECK_MSG(r.edits[0].start_line == 2 && r.edits[0].start_char == 0, "start");
    CHECK_MSG(r.edits[0].end_line == 2 && r.edits[0].end_char == 7 + 1 + 2 + 2,
              "end %d:%d", r.edits[0].end_line, r.edits[0].end_char);
  }
  nsys_annotate_result_free(&r);
}

static void test_tags_and_names(void) {
  char path[64];
  int line = 0;
  CHECK_MSG(nsys_parse_source_tag("train.py:42 forward", path, sizeof path, &line) && line == 42 &&
            strcmp(path, "train.py") == 0, "basic tag");
  CHECK_MSG(nsys_parse_source_tag("a/b.py:7", path, sizeof path, &line) && line == 7, "no label");
  /* spaces are legal in paths, but "see foo.py:12 for" is free text: a path
   * with spaces is taken when explicit, else only by the _spaced variant
   * (whose caller checks that the file exists) */
  CHECK_MSG(!nsys_parse_source_tag("see foo.py:12 for details", path, sizeof path, &line), "free text");
  CHECK_MSG(!nsys_parse_source_tag("My Project/train.py:3 step", path, sizeof path, &line), "implicit spaced");
  CHECK_MSG(nsys_parse_source_tag_spaced("My Project/train.py:3 step", path, sizeof path, &line) && line == 3 &&
                strcmp(path, "My Project/train.py") == 0,
            "spaced variant");
  CHECK_MSG(nsys_parse_source_tag_spaced("see foo.py:12 for", path, sizeof path, &line) &&
                strcmp(path, "see foo.py") == 0,
            "spaced variant leaves the check to its caller");
  CHECK_MSG(nsys_parse_source_tag("/home/me/My Project/train.py:3 step", path, sizeof path, &line) &&
                strcmp(path, "/home/me/My Project/train.py") == 0,
            "absolute spaced");
  CHECK_MSG(nsys_parse_source_tag("./a b.py:9", path, sizeof path, &line) && line == 9, "./ spaced");
  CHECK_MSG(!nsys_parse_source_tag_spaced("conv2d, see x.py:3", path, sizeof path, &line), "comma");
  CHECK_MSG(!nsys_parse_source_tag("a.py:0 x", path, sizeof path, &line), "line 0");
  CHECK_MSG(!nsys_parse_source_tag("averyveryveryveryveryveryveryveryveryveryveryverylongname/file.py:3", path, 16,
                                   &line),
            "does not fit");
  CHECK_MSG(!nsys_parse_source_tag("aten::linear, seq = 12, op_id = 3", path, sizeof path, &line), "aten");
  CHECK_MSG(!nsys_parse_source_tag("FSDP::post_forward (encoder.block.0:1)", path, sizeof path, &line), "fsdp");
  CHECK_MSG(!nsys_parse_source_tag("step:abc", path, sizeof path, &line), "not a number");
  CHECK_MSG(!nsys_parse_source_tag(":12 x", path, sizeof path, &line), "empty path");
  struct { const char *in, *out; } names[] = {
      {"void at::native::vectorized_elementwise_kernel<4, at::native::Add<float>>(int, float)",
       "vectorized_elementwise_kernel"},
      {"init_array(double*, unsigned long)", "init_array"},
      {"triton_poi_fused_add_0", "triton_poi_fused_add_0"},
      {"void (anonymous namespace)::softmax_warp<float, 4>(float*)", "softmax_warp"},
      {"cudaError cudaLaunchKernel<char>(char const*, dim3)", "cudaLaunchKernel"},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
       "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char out[128];
    nsys_symbol_base_name(names[i].in, out, sizeof out);
    CHECK_MSG(strcmp(out, names[i].out) == 0, "base name of %s: %s", names[i].in, out);
  }
  char s[64];
  CHECK_MSG(nsys_triton_strip_suffix("add_kernel_0d1d2de", s, sizeof s) && strcmp(s, "add_kernel") == 0,
            "triton suffix");
  CHECK_MSG(!nsys_triton_strip_suffix("triton_poi_fused_add_0", s, sizeof s), "inductor names keep _0");
  /* NVHPC names: function and line */
  struct { const char *in, *func; int line; } nv[] = {
      {"main_53_gpu", "main", 53},
      {"main_53_gpu__red", "main", 53},
      {"feed_input_23_gpu", "feed_input", 23},
      {"main_7_gpu_1", "main", 7},
      {"nvkernel_solve_F1L204_2", "solve", 204},
      {"nvkernel_solve_F12L9_0", "solve", 9},
      {"nvkernel__Z5solveRSt6vectorIdSaIdEERKS1_i_F1L9_2", "solve", 9},
      {"nvkernel__ZN2ns6jacobiEPfi_F1L30_1", "jacobi", 30},
  };
  for (size_t i = 0; i < sizeof nv / sizeof nv[0]; i++) {
    char f[64];
    int l = 0;
    CHECK_MSG(nsys_nvhpc_kernel(nv[i].in, f, sizeof f, &l) && strcmp(f, nv[i].func) == 0 && l == nv[i].line,
              "nvhpc %s -> %s:%d", nv[i].in, f, l);
  }
  const char *not_nv[] = {"gpu", "_53_gpu", "main_gpu", "main_0_gpu", "main_53_gpux", "main_53_gpu__redx",
                          "nvkernel_solve_F1L_2", "nvkernel_F1L9_2", "vectorized_gpu_kernel", "main_53_gpu_"};
  for (size_t i = 0; i < sizeof not_nv / sizeof not_nv[0]; i++) {
    char f[64];
    int l = 0;
    CHECK_MSG(!nsys_nvhpc_kernel(not_nv[i], f, sizeof f, &l), "not nvhpc: %s", not_nv[i]);
  }
  /* lambdas: the enclosing function */
  struct { const char *in, *out; } lam[] = {
      {"void cub::DeviceForEachKernel<P, long, saxpy(int, float, float*, float*)::{lambda(int)#1}>(long)", "saxpy"},
      {"void thrust::f<main::{lambda(float)#2}>(int)", "main"},
      {"void k<Foo::bar<int>(int)::{lambda(int)#1}>()", "bar"},
      {"void t<__nv_dl_wrapper_t<__nv_dl_tag<void (*)(thrust::device_vector<float> &, float), &scale_thrust, 1u>, float>>()",
       "scale_thrust"},
      {"void t<__nv_dl_wrapper_t<__nv_dl_tag<void (*)(int), &ns::run, 2u>>>()", "run"},
  };
  for (size_t i = 0; i < sizeof lam / sizeof lam[0]; i++) {
    char out[64];
    CHECK_MSG(nsys_lambda_parent(lam[i].in, out, sizeof out) && strcmp(out, lam[i].out) == 0, "lambda %s -> %s",
              lam[i].in, out);
  }
  char out[64];
  CHECK_MSG(!nsys_lambda_parent("void k<float>(float*)", out, sizeof out), "no lambda");
  /* Numba names: the def name and its module */
  struct { const char *in, *name, *module; } nb[] = {
      {"cudapy::pkg.ops::axpy$241(Array<float, 1, C, mutable, aligned>)", "axpy", "pkg.ops"},
      {"cudapy::__main__::axpy$3(Array<float, 1, C, mutable, aligned>)", "axpy", "__main__"},
      {"pkg::ops::axpy[abi:v1,cw51cXTLSUw](Array<float, 1, C, mutable, aligned>, float)", "axpy", "ops"},
      {"__main__::k[abi:v1](float)", "k", "__main__"},
      {"void vecadd<float>(const T1 *, int)", "vecadd", ""},
  };
  for (size_t i = 0; i < sizeof nb / sizeof nb[0]; i++) {
    char n[64], mod[64];
    nsys_kernel_def_name(nb[i].in, n, sizeof n, mod, sizeof mod);
    CHECK_MSG(strcmp(n, nb[i].name) == 0 && strcmp(mod, nb[i].module) == 0, "numba %s -> %s / %s", nb[i].in, n,
              mod);
  }
}

/* A second pass that inserts lines above earlier markers renumbers their tags. */
static void test_renumber(void) {
  const char *src = "import torch\n\ndef f(x):\n    a = g(x)\n    b = h(a)\n    return b\n\ndef k():\n    z()\n";
  nsys_annotate_opts o = {.rel_path = "t.py", .scope = NSYS_ANNOT_FILE};
  nsys_annotate_result r1, r2, r3;
  nsys_annotate(src, strlen(src), &o, &r1);
  CHECK_MSG(strstr(r1.new_text, "\"t.py:9 k\"") != NULL, "pass 1: %s", r1.new_text);
  nsys_annotate_opts o2 = {.rel_path = "t.py", .scope = NSYS_ANNOT_FUNCTION, .function = "f", .statement = true};
  nsys_annotate(r1.new_text, r1.new_len, &o2, &r2);
  /* two statement markers inside f (return b computes nothing): k moved from line 9 to 11 */
  CHECK_MSG(r2.n_markers == 2 && r2.n_renumbered == 1, "pass 2: %d markers, %d renumbered", r2.n_markers,
            r2.n_renumbered);
  CHECK_MSG(strstr(r2.new_text, "\"t.py:11 k\"") != NULL && strstr(r2.new_text, "\"t.py:3 f\"") != NULL,
            "pass 2: %s", r2.new_text);
  /* fixpoint, and unannotate still restores the original */
  nsys_annotate(r2.new_text, r2.new_len, &o2, &r3);
  CHECK_MSG(r3.n_edits == 0, "pass 3 changed %d", r3.n_edits);
  nsys_annotate_result_free(&r3);
  nsys_unannotate(r2.new_text, r2.new_len, &r3);
  CHECK_MSG(r3.new_len == strlen(src) && memcmp(r3.new_text, src, r3.new_len) == 0, "unannotate: %s", r3.new_text);
  nsys_annotate_result_free(&r3);
  nsys_annotate_result_free(&r2);
  nsys_annotate_result_free(&r1);
}

int main(void) {
  test_renumber();
  test_scan();
  test_structure();
  test_annotate();
  test_edits();
  test_tags_and_names();
  return nsys_check_done("source_annotate");
}
