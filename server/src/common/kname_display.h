/* Simplified display names of kernels, from the names CUPTI records
 * (demangledName, with shortName as fallback). A pure function: no JSON, no
 * SQLite, no allocation that outlives a call; accepts any byte string
 * (fuzzed through explain's kernel-name target).
 *
 *   "void at::native::vectorized_elementwise_kernel<(int)4,
 *    at::native::FillFunctor<float>, std::array<...>>(int, T2, T3)"
 *   -> "vectorized_elementwise_kernel<FillFunctor<float>>"
 *
 * Used by index/ (one display name per distinct kernel name, derived at
 * index load) and explain/ (kernel/explain, agent). */
#ifndef NSYS_KNAME_DISPLAY_H
#define NSYS_KNAME_DISPLAY_H

#include <stddef.h>

#define NSYS_KNAME_DISPLAY_MAX 160

/* Writes the simplified display name of `full` (demangled; may be NULL or
 * "") into out (cap bytes, always NUL-terminated). Falls back to `short_name`
 * when full is empty. Template arguments that carry no meaning (numbers,
 * std::array, offset calculators, policies, pointers) are dropped, wrapper
 * templates (gpu_kernel_impl, ReduceOp, BinaryFunctor, cutlass::Kernel2, ...)
 * are replaced by what they wrap, lambdas by their enclosing function, the
 * `void` return type, the argument list and namespaces folded. Names that are
 * not C++ ("[CUDA memcpy HtoD]") are kept. The result is at most
 * NSYS_KNAME_DISPLAY_MAX bytes (cut at a UTF-8 boundary with an ellipsis). */
void nsys_kname_display(const char *full, const char *short_name, char *out, size_t cap);

#endif
