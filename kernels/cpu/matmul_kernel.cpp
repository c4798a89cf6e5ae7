// The CPU "mm" and "bmm" kernels: c[i] = a[i] @ b[i] for each batch entry i (CheckMatmulArgs gives
// the plan: sizes, layouts, batch strides). float32 and float64 go to OpenBLAS (cblas_sgemm,
// cblas_dgemm) with each operand read in place, a transpose flag for a column-major one (kernels/
// matmul.h); float16 and bfloat16 are widened to float32, multiplied by cblas_sgemm and rounded
// once to the output, as PyTorch's CPU half matmul accumulates in float; integers by a plain loop
// that wraps on overflow (unsigned arithmetic), rows split over oneTBB.
#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include <tbb/blocked_range.h>

#include "kernels/cpu/elem.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel_checks.h"
#include "kernels/matmul.h"
#include "kernels/parallel.h"
#include "kernels/register_kernel.h"

namespace ofl::kernels::cpu {
namespace {

CBLAS_TRANSPOSE Trans(const GemmOperand& x) { return x.transposed ? CblasTrans : CblasNoTrans; }

// Element (i, j) of an operand in its GEMM layout.
int64_t At(const GemmOperand& x, int64_t i, int64_t j) {
  return x.transposed ? j * x.ld + i : i * x.ld + j;
}

void OneThreadUnderTsan() {
#ifdef OFL_TSAN
  // OpenBLAS's worker threads hand results over by means TSan cannot see (it is not instrumented):
  // one thread, the caller's, as oneTBB gets none under TSan (kernels/parallel.h).
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
#endif
}

template <class T>
void BlasGemm(const GemmPlan& p, const T* a, const T* b, T* c) {
  OneThreadUnderTsan();
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const int lda = static_cast<int>(p.a.ld), ldb = static_cast<int>(p.b.ld);
  for (int64_t i = 0; i < p.batch; ++i) {
    const T* ai = a + i * p.a_batch_stride;
    const T* bi = b + i * p.b_batch_stride;
    T* ci = c + i * p.m * p.n;
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(CblasRowMajor, Trans(p.a), Trans(p.b), m, n, k, 1.0f, ai, lda, bi, ldb, 0.0f, ci,
                  n);
    } else {
      cblas_dgemm(CblasRowMajor, Trans(p.a), Trans(p.b), m, n, k, 1.0, ai, lda, bi, ldb, 0.0, ci,
                  n);
    }
  }
}

// float16 / bfloat16: each batch entry's operands widened to contiguous float32, one sgemm, the
// product rounded once.
template <class T>
void HalfGemm(const GemmPlan& p, const uint16_t* a, const uint16_t* b, uint16_t* c) {
  OneThreadUnderTsan();
  using E = Elem<T>;
  std::vector<float> fa(static_cast<size_t>(p.m * p.k)), fb(static_cast<size_t>(p.k * p.n));
  std::vector<float> fc(static_cast<size_t>(p.m * p.n));
  for (int64_t i = 0; i < p.batch; ++i) {
    const uint16_t* ai = a + i * p.a_batch_stride;
    const uint16_t* bi = b + i * p.b_batch_stride;
    for (int64_t r = 0; r < p.m; ++r) {
      for (int64_t q = 0; q < p.k; ++q) fa[r * p.k + q] = E::Load(ai[At(p.a, r, q)]);
    }
    for (int64_t r = 0; r < p.k; ++r) {
      for (int64_t q = 0; q < p.n; ++q) fb[r * p.n + q] = E::Load(bi[At(p.b, r, q)]);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(p.m),
                static_cast<int>(p.n), static_cast<int>(p.k), 1.0f, fa.data(),
                static_cast<int>(p.k), fb.data(), static_cast<int>(p.n), 0.0f, fc.data(),
                static_cast<int>(p.n));
    uint16_t* ci = c + i * p.m * p.n;
    for (int64_t e = 0; e < p.m * p.n; ++e) ci[e] = E::Store(fc[static_cast<size_t>(e)]);
  }
}

// Integers: row r of batch entry i is sum over q of a(r, q) * b(q, :), accumulated in the
// unsigned compute type (wraps as the integer types do).
template <class T>
void IntegerGemm(const GemmPlan& p, const T* a, const T* b, T* c) {
  using E = Elem<T>;
  using C = typename E::Compute;
  const int64_t rows = p.batch * p.m;
  auto range = [&](int64_t begin, int64_t end) {
    std::vector<C> acc(static_cast<size_t>(p.n));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row / p.m, r = row % p.m;
      const T* ai = a + i * p.a_batch_stride;
      const T* bi = b + i * p.b_batch_stride;
      std::fill(acc.begin(), acc.end(), C{0});
      for (int64_t q = 0; q < p.k; ++q) {
        const C x = E::Load(ai[At(p.a, r, q)]);
        for (int64_t j = 0; j < p.n; ++j) {
          acc[static_cast<size_t>(j)] += x * E::Load(bi[At(p.b, q, j)]);
        }
      }
      T* ci = c + row * p.n;
      for (int64_t j = 0; j < p.n; ++j) ci[j] = E::Store(acc[static_cast<size_t>(j)]);
    }
  };
  const int64_t work = rows * p.n * std::max<int64_t>(p.k, 1);
  if (work < (int64_t{1} << 18) || rows == 1) {
    range(0, rows);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, p.n * p.k));
  ParallelFor(tbb::blocked_range<int64_t>(0, rows, grain),
              [&](const tbb::blocked_range<int64_t>& r) { range(r.begin(), r.end()); });
}

template <const char* kName>
void MatmulKernel(const KernelContext& ctx) {
  const GemmPlan p = CheckMatmulArgs(kName, ctx);
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.numel() == 0) return;
  if (p.k == 0) {  // an empty sum: zeros
    std::memset(out.data, 0, static_cast<size_t>(out.shape.numel()) * element_size(out.dtype));
    return;
  }
  const void* a = ctx.inputs[0].data;
  const void* b = ctx.inputs[1].data;
  VisitDType<float16, bfloat16>(out.dtype, kName, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      BlasGemm<T>(p, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out.data));
    } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      HalfGemm<T>(p, static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b),
                  static_cast<uint16_t*>(out.data));
    } else if constexpr (!std::is_same_v<T, bool>) {
      IntegerGemm<T>(p, static_cast<const T*>(a), static_cast<const T*>(b),
                     static_cast<T*>(out.data));
    }
  });
}

constexpr char kMm[] = "mm";
constexpr char kBmm[] = "bmm";
void MmCheck(const KernelContext& ctx) { CheckMatmulArgs(kMm, ctx); }
void BmmCheck(const KernelContext& ctx) { CheckMatmulArgs(kBmm, ctx); }
OFL_REGISTER_CPU_KERNEL("mm", MatmulKernel<kMm>, MmCheck);
OFL_REGISTER_CPU_KERNEL("bmm", MatmulKernel<kBmm>, BmmCheck);

}  // namespace
}  // namespace ofl::kernels::cpu
