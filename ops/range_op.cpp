// range_: fills a new 1-dim tensor (input 0) with arange's or linspace's values by the "range"
// kernel (kernels/range.h: start + i * step, or from the end for i >= head). The functions
// ofl::arange and ofl::linspace (oneflow_lite/functional/creation_functors.cpp) check the
// arguments and size the tensor; nothing differentiates through it.
#include "ops/write_op.h"

namespace ofl::ops {
namespace {

OpSchema MakeRangeOp() {
  return MakeWriteOp("range_", "range",
                     {{"start", AttrType::kScalar},
                      {"step", AttrType::kScalar},
                      {"end", AttrType::kScalar},
                      {"head", AttrType::kInt}});
}
OFL_REGISTER_OP(MakeRangeOp);

}  // namespace
}  // namespace ofl::ops
