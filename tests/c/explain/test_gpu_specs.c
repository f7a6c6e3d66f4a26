/* GPU spec matching and theoretical occupancy, table-driven. */
#include <stdlib.h>

#include "../common/nsys_check.h"
#include "explain/gpu_specs.h"
#include "explain/occupancy.h"

static void test_match(void) {
  static const struct {
    const char *name;
    const char *want; /* canonical name or NULL */
  } cases[] = {
      {"NVIDIA H100 80GB HBM3", "H100 SXM"},
      {"NVIDIA H100 PCIe", "H100 PCIe"},
      {"NVIDIA H100 NVL", "H100 NVL"},
      {"NVIDIA H200", "H200"},
      {"NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"},
      {"NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB"},
      {"A100-PCIE-40GB", "A100 PCIe 40GB"},
      {"NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"},
      {"NVIDIA A10", "A10"},
      {"NVIDIA A10G", "A10G"},
      {"Tesla V100-SXM2-16GB", "V100 SXM2"},
      {"Tesla V100-PCIE-32GB", "V100 PCIe"},
      {"Tesla T4", "T4"},
      {"NVIDIA L4", "L4"},
      {"NVIDIA L40S", "L40S"},
      {"NVIDIA GeForce RTX 3060", "RTX 3060"},
      {"NVIDIA GeForce RTX 3070 Ti", "RTX 3070 Ti"},
      {"NVIDIA GeForce RTX 3080", "RTX 3080"},
      {"NVIDIA GeForce RTX 4090 D", "RTX 4090 D"},
      {"NVIDIA GeForce RTX 4090", "RTX 4090"},
      {"NVIDIA GeForce RTX 4060 Ti", "RTX 4060 Ti"},
      {"NVIDIA RTX 5000 Ada Generation Laptop GPU", "RTX 5000 Ada Laptop"},
      {"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"},
      {"NVIDIA GeForce RTX 5060 Ti", "RTX 5060 Ti"},
      {"NVIDIA GeForce RTX 5090", "RTX 5090"},
      {"NVIDIA B200", "B200"},
      {"NVIDIA GB200", "GB200"},
      {"NVIDIA TITAN RTX", "TITAN RTX"},
      {"NVIDIA RTX A2000 12GB", "RTX A2000"},
      /* exact: a variant is not its base part */
      {"GeForce GTX 1060 with Max-Q Design", NULL},
      {"NVIDIA GeForce RTX 4070 SUPER", "RTX 4070 SUPER"},
      {"NVIDIA GeForce RTX 4070 Ti SUPER", "RTX 4070 Ti SUPER"},
      {"NVIDIA GeForce RTX 4070", "RTX 4070"},
      {"NVIDIA GeForce RTX 4080 SUPER", "RTX 4080 SUPER"},
      {"NVIDIA GeForce RTX 4060 Laptop GPU", NULL},
      {"NVIDIA GeForce RTX 4090 Laptop GPU", NULL},
      {"NVIDIA GeForce RTX 3060 Ti", "RTX 3060 Ti"},
      {"NVIDIA RTX 5000 Ada Generation", "RTX 5000 Ada"},
      {"nvidia  rtx-5000_ada generation LAPTOP gpu", "RTX 5000 Ada Laptop"},
      {"NVIDIA A800-SXM4-80GB", "A100 SXM4 80GB"},
      {"NVIDIA GH200 480GB", "H200"},
      {"NVIDIA H100 80GB HBM3 MIG 1g.10gb", "H100 SXM"},
      {"NVIDIA A30 MIG 2g.12gb", "A30"},
      {"NVIDIA A100-SXM4-40GB MIG 3g.20gb", "A100 SXM4 40GB"},
      {"NVIDIA A30X", NULL},
      {"NVIDIA H100 SXM5 80GB", "H100 SXM"},
      {"MIG 1g.5gb", NULL},
      {"Intel(R) Iris(R) Xe Graphics", NULL},
      {"Microsoft Basic Render Driver", NULL},
      {"", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const nsys_gpu_spec *s = nsys_gpu_spec_match(cases[i].name);
    if (!cases[i].want) {
      CHECK_MSG(s == NULL, "'%s' unexpectedly matched %s", cases[i].name, s->name);
    } else {
      CHECK_STR(s ? s->name : NULL, cases[i].want);
    }
  }
  CHECK(nsys_gpu_spec_match(NULL) == NULL);
  CHECK(nsys_gpu_name_is_mig("NVIDIA A30 MIG 2g.12gb"));
  CHECK(nsys_gpu_name_is_mig("NVIDIA A100-SXM4-40GB MIG 1g.5gb"));
  CHECK(!nsys_gpu_name_is_mig("NVIDIA A30"));
  CHECK(!nsys_gpu_name_is_mig("NVIDIA Migrator 9000"));
  CHECK(!nsys_gpu_name_is_mig(NULL));
  const nsys_gpu_spec *h = nsys_gpu_spec_match("NVIDIA H100 80GB HBM3");
  CHECK(h && h->sm_count == 132 && h->cc_major == 9);
  CHECK_NEAR(nsys_gpu_spec_peak(h, "bf16"), 989, 1e-9);
  CHECK_NEAR(nsys_gpu_spec_peak(h, "fp8"), 1979, 1e-9);
  CHECK_NEAR(nsys_gpu_spec_peak(h, "nonsense"), 0, 1e-9);
  const nsys_gpu_spec *g = nsys_gpu_spec_match_or_cc("Mystery GPU", 8, 6);
  CHECK(g && g->cc_major == 8 && g->cc_minor == 6 && g->sm_count == 0);
  CHECK(nsys_gpu_spec_match_or_cc("Mystery GPU", -1, -1) == NULL);
  /* every row is sane */
  for (size_t i = 0; i < nsys_gpu_spec_count(); i++) {
    const nsys_gpu_spec *s = nsys_gpu_spec_at(i);
    CHECK(s->sm_count > 0 && s->mem_bw_gbps > 0 && s->fp32_tflops > 0);
    CHECK(nsys_sm_limits_for(s->cc_major, s->cc_minor) != NULL);
  }
  CHECK(nsys_gpu_spec_at(nsys_gpu_spec_count()) == NULL);
}

static void test_occupancy(void) {
  /* Expected values worked out by hand from the Occupancy Calculator model. */
  static const struct {
    int cc_major, cc_minor;
    int bx, regs;
    int smem;
    int want_blocks;
    double want_occ;
    nsys_occ_limiter limiter;
  } cases[] = {
      /* sm_80: 256 threads, 32 regs -> warps limit 8 blocks, regs 65536/(32*32)=64 warps -> 8 */
      {8, 0, 256, 32, 0, 8, 1.0, NSYS_OCC_LIMIT_WARPS},
      /* sm_80: 256 threads, 128 regs -> 4096 regs/warp -> 16 warps -> 2 blocks = 16/64 */
      {8, 0, 256, 128, 0, 2, 0.25, NSYS_OCC_LIMIT_REGISTERS},
      /* sm_90: 128 threads, 168 regs -> per warp 5376 -> 12 warps -> 12/4*4 = 12 -> 3 blocks */
      {9, 0, 128, 168, 0, 3, 12.0 / 64, NSYS_OCC_LIMIT_REGISTERS},
      /* sm_90: 384 threads, 64 regs (2 blocks), 200 KB smem -> 1 block by smem */
      {9, 0, 384, 64, 200 * 1024, 1, 12.0 / 64, NSYS_OCC_LIMIT_SHARED_MEMORY},
      /* sm_86: 128 threads, 16 regs, no smem -> warps 48/4 = 12 blocks, block limit 16 -> 12 */
      {8, 6, 128, 16, 0, 12, 1.0, NSYS_OCC_LIMIT_WARPS},
      /* sm_86: 32 threads -> warps limit 48, block limit 16 -> 16 blocks = 16/48 */
      {8, 6, 32, 16, 0, 16, 16.0 / 48, NSYS_OCC_LIMIT_BLOCKS},
      /* sm_75: 1024 threads -> 1 block, 32/32 warps */
      {7, 5, 1024, 32, 0, 1, 1.0, NSYS_OCC_LIMIT_WARPS},
      /* sm_80: 128 threads, 48 KB smem: (48K+1K) rounded 128 -> 164K/49K = 3 */
      {8, 0, 128, 32, 48 * 1024, 3, 12.0 / 64, NSYS_OCC_LIMIT_SHARED_MEMORY},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nsys_launch l = {{1000, 1, 1}, {cases[i].bx, 1, 1}, cases[i].regs, cases[i].smem, 0, 0, 0};
    nsys_occupancy o;
    nsys_occupancy_compute(&l, nsys_sm_limits_for(cases[i].cc_major, cases[i].cc_minor), 100, &o);
    CHECK(o.valid);
    CHECK_MSG(o.blocks_per_sm == cases[i].want_blocks, "occupancy case %zu: blocks %d want %d (%s)", i,
              o.blocks_per_sm, cases[i].want_blocks, o.why);
    CHECK_NEAR(o.occupancy, cases[i].want_occ, 1e-9);
    CHECK_MSG(o.limiter == cases[i].limiter, "case %zu limiter %s", i, nsys_occ_limiter_name(o.limiter));
  }
  /* invalid launches never crash and say why */
  nsys_launch bad = {{1, 1, 1}, {2048, 1, 1}, 32, 0, 0, 0, 0};
  nsys_occupancy o;
  nsys_occupancy_compute(&bad, nsys_sm_limits_for(9, 0), 132, &o);
  CHECK(!o.valid && o.why[0]);
  nsys_launch zero = {{0, 0, 0}, {0, 0, 0}, 0, 0, 0, 0, 0};
  nsys_occupancy_compute(&zero, nsys_sm_limits_for(9, 0), 132, &o);
  CHECK(!o.valid);
  nsys_launch big = {{1, 1, 1}, {128, 1, 1}, 32, 300 * 1024, 0, 0, 0};
  nsys_occupancy_compute(&big, nsys_sm_limits_for(9, 0), 132, &o);
  CHECK(!o.valid);
  nsys_occupancy_compute(&big, NULL, 132, &o);
  CHECK(!o.valid);
  /* waves: 264 blocks of 1024 threads on 132 SMs of sm_90 (2 blocks/SM) = 1 wave */
  nsys_launch w = {{264, 1, 1}, {1024, 1, 1}, 32, 0, 0, 0, 0};
  nsys_occupancy_compute(&w, nsys_sm_limits_for(9, 0), 132, &o);
  CHECK(o.valid && o.blocks_per_sm == 2);
  CHECK_NEAR(o.waves, 1.0, 1e-9);
  CHECK(nsys_sm_limits_for(8, 7) && nsys_sm_limits_for(12, 1) && !nsys_sm_limits_for(3, 0));
}

int main(void) {
  test_match();
  test_occupancy();
  return nsys_check_done("explain_gpu_specs");
}
