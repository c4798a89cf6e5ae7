// reduce_sum_to(x, dtype, target): attributes dtype (dtype) and target (shape): x summed over the
// dims where the target (of x's rank) is 1 and x is not, into a contiguous tensor of the target
// shape and that dtype (x's own, or float32 to and from float16 / bfloat16, for sums kept in
// float32 between rounds), with the "reduce_sum_to" kernel's accuracy rules. The building block of
// the reductions composed of it (repeat_backward); call_op("reduce_sum_to", {x}, {{"dtype", d},
// {"target", t}}) reaches it too. Gradient (same dtype only): g expanded back to x's shape.
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
bool IsHalf(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

OpSchema MakeReduceSumToOp() {
  OpSchema op;
  op.name = "reduce_sum_to";
  op.attrs = {{"dtype", AttrType::kDType}, {"target", AttrType::kShape}};
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    const TensorMeta& x = in[0];
    CheckDType("reduce_sum_to", x.dtype);
    const DType out = attrs.get_dtype("dtype");
    CheckDType("reduce_sum_to", out);
    if (x.dtype == DType::kBool)
      throw InvalidArgument("reduce_sum_to: dtype bool is not supported");
    if (out != x.dtype && !(IsHalf(x.dtype) && out == DType::kFloat32) &&
        !(x.dtype == DType::kFloat32 && IsHalf(out))) {
      throw InvalidArgument("reduce_sum_to: cannot sum " + to_string(x.dtype) + " into " +
                            to_string(out) +
                            " (the dtypes must match, or be float32 and a 16-bit float)");
    }
    const IntList target = attrs.get_ints("target");
    if (static_cast<int>(target.size()) != x.shape.ndim()) {
      throw InvalidArgument("reduce_sum_to: the target has " + std::to_string(target.size()) +
                            " dims, the input " + x.shape.str() + " has " +
                            std::to_string(x.shape.ndim()));
    }
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] != 1 && target[i] != x.shape[static_cast<int>(i)]) {
        throw InvalidArgument("reduce_sum_to: target dim " + std::to_string(i) + " is " +
                              std::to_string(target[i]) + "; it must be 1 or the input's size " +
                              std::to_string(x.shape[static_cast<int>(i)]) + " (input " +
                              x.shape.str() + ")");
      }
    }
    return std::vector<TensorMeta>{{Shape(target.data(), static_cast<int>(target.size())), out}};
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    if (ctx.input_info[0].dtype != ctx.output_info[0].dtype) {
      throw InvalidArgument("reduce_sum_to: no gradient across dtypes (" +
                            to_string(ctx.output_info[0].dtype) + " to " +
                            to_string(ctx.input_info[0].dtype) + ")");
    }
    return std::vector<Tensor>{g[0].expand(ctx.input_info[0].shape.vec())};
  };
  return op;
}
OFL_REGISTER_OP(MakeReduceSumToOp);
}  // namespace
}  // namespace ofl::ops
