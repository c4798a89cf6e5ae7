#include "ops/matmul_op.h"

#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {

OpSchema MatmulOp(const char* name, bool batched) {
  OpSchema op;
  op.name = name;
  op.num_inputs = 2;
  op.form = KernelForm{};
  op.infer = [name, batched](const std::vector<TensorMeta>& in, const Attrs&) {
    const int rank = batched ? 3 : 2;
    const char* which[2] = {"input", "mat2"};
    for (int i = 0; i < 2; ++i) {
      if (in[i].shape.ndim() != rank) {
        throw InvalidArgument(std::string(name) + ": " + which[i] + " must be a " +
                              std::to_string(rank) + "-dim tensor, got shape " + in[i].shape.str());
      }
    }
    const Shape& a = in[0].shape;
    const Shape& b = in[1].shape;
    if (in[0].dtype != in[1].dtype) {
      throw InvalidArgument(std::string(name) +
                            ": expected input and mat2 to have the same dtype, " + "got " +
                            to_string(in[0].dtype) + " and " + to_string(in[1].dtype));
    }
    if (in[0].dtype == DType::kBool) {
      throw InvalidArgument(std::string(name) +
                            ": dtype bool is not supported (an integer or float dtype is)");
    }
    const int o = batched ? 1 : 0;
    if (a[o + 1] != b[o] || (batched && a[0] != b[0])) {
      throw InvalidArgument(std::string(name) + ": input " + a.str() + " and mat2 " + b.str() +
                            " cannot be multiplied" +
                            (batched && a[0] != b[0]
                                 ? " (batch sizes differ)"
                                 : " (" + std::to_string(a[o + 1]) + " columns against " +
                                       std::to_string(b[o]) + " rows)"));
    }
    const Shape out = batched ? Shape({a[0], a[1], b[2]}) : Shape({a[0], b[1]});
    return std::vector<TensorMeta>{TensorMeta{out, in[0].dtype}};
  };
  op.save_inputs = Bit(0) | Bit(1);
  op.save_inputs_for = [](uint64_t needs) -> uint64_t {
    return ((needs & Bit(0)) ? Bit(1) : 0) | ((needs & Bit(1)) ? Bit(0) : 0);
  };
  op.backward = [batched](const GradContext& ctx, const std::vector<Tensor>& g) {
    const std::vector<int64_t> swap =
        batched ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{1, 0};
    auto product = [batched](const Tensor& x, const Tensor& y) {
      return batched ? bmm(x, y) : mm(x, y);
    };
    std::vector<Tensor> dx(2);
    if (ctx.needs(0)) dx[0] = product(g[0], ctx.inputs[1].permute(swap));
    if (ctx.needs(1)) dx[1] = product(ctx.inputs[0].permute(swap), g[0]);
    return dx;
  };
  op.sbp_signature = [batched](const GlobalInputs& c) { return MatmulSignature(c, batched); };
  return op;
}

}  // namespace ofl::ops
