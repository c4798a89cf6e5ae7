// The values of the "range" kernel (arange and linspace, ops/range_op.cpp): element i of a 1-dim
// output of n elements, computed the same way on every device so that cpu, sim and cuda agree bit
// for bit.
// - Integer form (an integer output with integer start and step): start + i * step in int64,
//   wrapping, then converted to the output's dtype by the cast rules (kernels/cast_value.h).
// - Floating form (any other): in double, start + i * step for i < head, and
//   end - (n - 1 - i) * step from there on (linspace's symmetric halves, as PyTorch's; arange
//   passes head = n), then converted by the cast rules (float16 and bfloat16 through float).
#pragma once

#include <cstdint>

#include "kernels/cast_value.h"
#include "kernels/index_util.h"  // OFL_HOST_DEVICE
#include "kernels/kernel.h"

namespace ofl::kernels {

struct RangeSpec {
  bool integer = false;  // the integer form
  int64_t start_i = 0;
  int64_t step_i = 0;
  double start = 0;
  double step = 0;
  double end = 0;
  int64_t head = 0;
  int64_t n = 0;
};

// "range": no inputs, one 1-dim output (any stride; not bool), attributes "start", "step", "end"
// (scalars; the integer form where the output is an integer dtype and start and step are integers)
// and "head" (0 .. n). Returns what RangeValue reads. Host code of every backend
// (kernels/range_spec.cpp).
RangeSpec CheckRangeArgs(const KernelContext& ctx);

// C is the type an element computes in (the integers, bool, float, double).
template <class C>
OFL_HOST_DEVICE inline C RangeValue(const RangeSpec& s, int64_t i) {
  if (s.integer) {
    const uint64_t v = static_cast<uint64_t>(s.start_i) +
                       static_cast<uint64_t>(i) * static_cast<uint64_t>(s.step_i);
    return CastValue<C>(static_cast<int64_t>(v));
  }
  const double v = i < s.head ? s.start + static_cast<double>(i) * s.step
                              : s.end - static_cast<double>(s.n - 1 - i) * s.step;
  return CastValue<C>(v);
}

}  // namespace ofl::kernels
