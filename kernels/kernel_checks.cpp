#include "kernels/kernel_checks.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/gather.h"
#include "kernels/matmul.h"
#include "kernels/softmax.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels {
namespace {

void CheckStrides(const char* op, const char* which, const TensorArg& a) {
  if (a.stride.ndim() != a.shape.ndim()) {
    throw InvalidArgument(std::string(op) + ": " + which + " has " +
                          std::to_string(a.stride.ndim()) + " stride(s) for shape " +
                          a.shape.str() + " of " + std::to_string(a.shape.ndim()) + " dim(s)");
  }
}

std::string RepeatMismatch(const KernelContext& ctx) {
  return "repeat: output shape " + ctx.outputs[0].shape.str() + " does not match input shape " +
         ctx.inputs[0].shape.str() + " repeated by " +
         ToString(ctx.attributes.get_ints("repeats").data(),
                  ctx.attributes.get_ints("repeats").size());
}

// One input and one output, each with one stride per dim.
void CheckUnaryOperands(const char* op, const KernelContext& ctx) {
  if (ctx.inputs.size() != 1 || ctx.outputs.size() != 1) {
    throw InvalidArgument(std::string(op) + ": the kernel expects 1 input and 1 output, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  CheckStrides(op, "input", ctx.inputs[0]);
  CheckStrides(op, "output", ctx.outputs[0]);
}

// Attribute "dim" of an ndim-dim input wrapped to 0 .. ndim - 1 (0 for a 0-dim input, which
// takes -1 and 0); InvalidArgument naming the op and the range otherwise.
int64_t WrapKernelDim(const std::string& name, int64_t dim, int ndim) {
  const int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  if (dim < lo || dim > hi) {
    throw InvalidArgument(name + ": dim " + std::to_string(dim) + " is out of range for a " +
                          std::to_string(ndim) + "-dim tensor (expected " + std::to_string(lo) +
                          " to " + std::to_string(hi) + ")");
  }
  return dim < 0 ? dim + (ndim == 0 ? 1 : ndim) : dim;
}

bool IsInteger(DType d) {
  return d == DType::kUInt8 || d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 ||
         d == DType::kInt64;
}

}  // namespace

void CheckCopyArgs(const KernelContext& ctx) {
  CheckUnaryOperands("copy", ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  if (in.shape != out.shape) {
    throw InvalidArgument("copy: input shape " + in.shape.str() + " differs from output shape " +
                          out.shape.str());
  }
  if (in.dtype != out.dtype) {
    throw InvalidArgument("copy: input dtype " + to_string(in.dtype) +
                          " differs from output dtype " + to_string(out.dtype));
  }
}

bool CheckRepeatArgs(const KernelContext& ctx) {
  CheckUnaryOperands("repeat", ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  const int n = out.shape.ndim();
  const int k = in.shape.ndim();
  const IntList repeats = ctx.attributes.get_ints("repeats");
  if (static_cast<int>(repeats.size()) != n || k > n) throw InvalidArgument(RepeatMismatch(ctx));
  if (in.dtype != out.dtype) {
    throw InvalidArgument("repeat: input dtype " + to_string(in.dtype) +
                          " differs from output dtype " + to_string(out.dtype));
  }
  bool empty = false;
  for (int i = 0; i < n; ++i) {
    const int j = i - (n - k);
    const int64_t si = j < 0 ? 1 : in.shape[j];
    const int64_t ri = repeats[i];
    int64_t oi = 0;
    if (ri < 0 || __builtin_mul_overflow(si, ri, &oi) || out.shape[i] != oi) {
      throw InvalidArgument(RepeatMismatch(ctx));
    }
    if (oi == 0) empty = true;
  }
  if (empty) return true;
  int64_t expect_stride = 1;
  for (int i = n - 1; i >= 0; --i) {  // the kernels write the output as one contiguous array
    if (out.stride[i] != expect_stride && out.shape[i] != 1) {
      throw InvalidArgument("repeat: output strides " + ToString(out.stride.vec()) +
                            " are not contiguous for shape " + out.shape.str());
    }
    expect_stride *= out.shape[i];
  }
  return false;
}

void CheckReduceSumToArgs(const KernelContext& ctx) {
  CheckUnaryOperands("reduce_sum_to", ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  if (in.dtype == DType::kBool || out.dtype == DType::kBool) {
    throw InvalidArgument(
        "reduce_sum_to: dtype bool is not supported (cast the tensor to an integer dtype before "
        "summing it)");
  }
  // Mixed 16-bit float / float32 lets a sum done in several passes keep float partial results.
  auto is_half = [](DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; };
  if (in.dtype != out.dtype && !((is_half(in.dtype) && out.dtype == DType::kFloat32) ||
                                 (in.dtype == DType::kFloat32 && is_half(out.dtype)))) {
    throw InvalidArgument("reduce_sum_to: input dtype " + to_string(in.dtype) +
                          " differs from output dtype " + to_string(out.dtype) +
                          " (only float16/bfloat16 <-> float32 may differ)");
  }
  const int n = in.shape.ndim();
  if (out.shape.ndim() != n) {
    throw InvalidArgument("reduce_sum_to: output shape " + out.shape.str() +
                          " does not have the rank of input shape " + in.shape.str());
  }
  for (int i = 0; i < n; ++i) {
    if (out.shape[i] != in.shape[i] && out.shape[i] != 1) {
      throw InvalidArgument("reduce_sum_to: output shape " + out.shape.str() +
                            " cannot be summed from input shape " + in.shape.str() + ": dim " +
                            std::to_string(i) + " must be " + std::to_string(in.shape[i]) +
                            " or 1");
    }
  }
}

const char* BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "add";
    case BinaryOp::kSub:
      return "sub";
    case BinaryOp::kMul:
      return "mul";
    case BinaryOp::kDiv:
      return "div";
  }
  return "binary";
}

void CheckBinaryArgs(BinaryOp op, const KernelContext& ctx) {
  const std::string name = BinaryOpName(op);
  if (ctx.inputs.size() != 2 || ctx.outputs.size() != 1) {
    throw InvalidArgument(name + ": the kernel expects 2 inputs and 1 output, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  const TensorArg& a = ctx.inputs[0];
  const TensorArg& b = ctx.inputs[1];
  const TensorArg& out = ctx.outputs[0];
  CheckStrides(name.c_str(), "input a", a);
  CheckStrides(name.c_str(), "input b", b);
  CheckStrides(name.c_str(), "output", out);
  if (a.shape != b.shape) {
    throw InvalidArgument(name + ": input a shape " + a.shape.str() +
                          " differs from input b shape " + b.shape.str());
  }
  if (out.shape != a.shape) {
    throw InvalidArgument(name + ": output shape " + out.shape.str() +
                          " differs from input shape " + a.shape.str());
  }
  if (a.dtype != b.dtype) {
    throw InvalidArgument(name + ": input a dtype " + to_string(a.dtype) +
                          " differs from input b dtype " + to_string(b.dtype));
  }
  if (out.dtype != a.dtype) {
    throw InvalidArgument(name + ": output dtype " + to_string(out.dtype) +
                          " differs from input dtype " + to_string(a.dtype));
  }
  if (a.dtype == DType::kBool) {
    throw InvalidArgument(name + ": dtype bool is not supported (cast the tensors to an integer " +
                          "or float dtype first)");
  }
  if (op == BinaryOp::kDiv && IsInteger(a.dtype)) {
    throw InvalidArgument("div: integer dtype " + to_string(a.dtype) +
                          " is not supported (no integer division: cast the tensors to a float "
                          "dtype first)");
  }
}

const char* UnaryOpName(UnaryOp op) {
  static constexpr const char* kNames[kNumUnaryOps] = {
      "neg", "abs",  "sign",    "relu", "exp",  "log",  "sqrt", "rsqrt",     "sin",
      "cos", "tanh", "sigmoid", "erf",  "silu", "gelu", "gelu", "pow_scalar"};
  const int i = static_cast<int>(op);
  return i >= 0 && i < kNumUnaryOps ? kNames[i] : "unary";
}

UnaryOp CheckUnaryArgs(UnaryOp op, const KernelContext& ctx, UnaryParams* params) {
  const char* name = UnaryOpName(op);
  CheckUnaryOperands(name, ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  if (out.shape != in.shape) {
    throw InvalidArgument(std::string(name) + ": output shape " + out.shape.str() +
                          " differs from input shape " + in.shape.str());
  }
  if (out.dtype != in.dtype) {
    throw InvalidArgument(std::string(name) + ": output dtype " + to_string(out.dtype) +
                          " differs from input dtype " + to_string(in.dtype));
  }
  if (!is_floating_point(in.dtype) && !(UnaryTakesIntegers(op) && IsInteger(in.dtype))) {
    throw InvalidArgument(
        std::string(name) + ": dtype " + to_string(in.dtype) + " is not supported (" +
        (UnaryTakesIntegers(op) ? "an integer or float dtype" : "a float dtype") + " is)");
  }
  if (op == UnaryOp::kPow) params->exponent = ctx.attributes.get_double("exponent");
  if (op == UnaryOp::kGelu || op == UnaryOp::kGeluTanh) {
    const std::string approximate = ctx.attributes.get_string("approximate");
    if (approximate == "tanh") return UnaryOp::kGeluTanh;
    if (approximate != "none") {
      throw InvalidArgument("gelu: approximate is \"" + approximate +
                            "\"; expected \"none\" or \"tanh\"");
    }
    return UnaryOp::kGelu;
  }
  return op;
}

void CheckCastArgs(const KernelContext& ctx) {
  CheckUnaryOperands("cast", ctx);
  if (ctx.outputs[0].shape != ctx.inputs[0].shape) {
    throw InvalidArgument("cast: output shape " + ctx.outputs[0].shape.str() +
                          " differs from input shape " + ctx.inputs[0].shape.str());
  }
}

const char* PointwiseOpName(PointwiseOp op) {
  static constexpr const char* kNames[kNumPointwiseOps] = {
      "eq",          "ne",          "lt",          "le",          "gt",          "ge",
      "logical_and", "logical_or",  "logical_xor", "logical_not", "maximum",     "minimum",
      "pow",         "bitwise_and", "bitwise_or",  "bitwise_xor", "bitwise_not", "clamp",
      "clamp_min",   "clamp_max",   "where"};
  const int i = static_cast<int>(op);
  return i >= 0 && i < kNumPointwiseOps ? kNames[i] : "pointwise";
}

namespace {
// An integer clamp bound the dtype holds (CheckHeldBy) as a value of the dtype: a negative bound
// for uint8 wraps as two's complement (-1 is 255), as Scalar::fits reads it.
int64_t BoundAsInteger(const Scalar& v, DType dtype) {
  const int64_t i = v.int64_value();
  return dtype == DType::kUInt8 && i < 0 ? i + 256 : i;
}
}  // namespace

void CheckPointwiseArgs(PointwiseOp op, const KernelContext& ctx, PointwiseParams* params) {
  const std::string name = PointwiseOpName(op);
  const int arity = PointwiseArity(op);
  if (static_cast<int>(ctx.inputs.size()) != arity || ctx.outputs.size() != 1) {
    throw InvalidArgument(name + ": the kernel expects " + std::to_string(arity) + " input" +
                          (arity == 1 ? "" : "s") + " and 1 output, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  const TensorArg& out = ctx.outputs[0];
  CheckStrides(name.c_str(), "output", out);
  static const char* const kWhich[3] = {"input 0", "input 1", "input 2"};
  for (int i = 0; i < arity; ++i) {
    const TensorArg& in = ctx.inputs[static_cast<size_t>(i)];
    CheckStrides(name.c_str(), kWhich[i], in);
    if (in.shape != out.shape) {
      throw InvalidArgument(name + ": " + kWhich[i] + " shape " + in.shape.str() +
                            " differs from output shape " + out.shape.str());
    }
  }
  const int first = op == PointwiseOp::kWhere ? 1 : 0;
  const DType dtype = ctx.inputs[static_cast<size_t>(first)].dtype;
  if (op == PointwiseOp::kWhere && ctx.inputs[0].dtype != DType::kBool) {
    throw InvalidArgument("where: the condition's dtype is " + to_string(ctx.inputs[0].dtype) +
                          "; expected bool");
  }
  for (int i = first + 1; i < arity; ++i) {
    if (ctx.inputs[static_cast<size_t>(i)].dtype != dtype) {
      throw InvalidArgument(name + ": " + kWhich[i] + " dtype " +
                            to_string(ctx.inputs[static_cast<size_t>(i)].dtype) + " differs from " +
                            kWhich[first] + " dtype " + to_string(dtype));
    }
  }
  const DType want = PointwiseGivesBool(op) ? DType::kBool : dtype;
  if (out.dtype != want) {
    throw InvalidArgument(name + ": output dtype " + to_string(out.dtype) + " is not " +
                          to_string(want) + " (" +
                          (PointwiseGivesBool(op) ? "a bool result" : "the inputs' dtype") + ")");
  }
  if (PointwiseIsBitwise(op) && is_floating_point(dtype)) {
    throw InvalidArgument(name + ": dtype " + to_string(dtype) +
                          " is not supported (an integer or bool dtype is)");
  }
  if (op == PointwiseOp::kPow && dtype == DType::kBool) {
    throw InvalidArgument("pow: dtype bool is not supported (an integer or float dtype is)");
  }
  if (PointwiseIsClamp(op)) {
    if (dtype == DType::kBool) {
      throw InvalidArgument(name + ": dtype bool is not supported (an integer or float dtype is)");
    }
    params->lo = -std::numeric_limits<double>::infinity();
    params->hi = std::numeric_limits<double>::infinity();
    params->lo_int = std::numeric_limits<int64_t>::min();
    params->hi_int = std::numeric_limits<int64_t>::max();
    if (op != PointwiseOp::kClampMax) {
      const Scalar lo = ctx.attributes.get_scalar("min");
      CheckHeldBy(lo, dtype, name, "min");
      params->lo = lo.to_double();
      if (!is_floating_point(dtype)) params->lo_int = BoundAsInteger(lo, dtype);
    }
    if (op != PointwiseOp::kClampMin) {
      const Scalar hi = ctx.attributes.get_scalar("max");
      CheckHeldBy(hi, dtype, name, "max");
      params->hi = hi.to_double();
      if (!is_floating_point(dtype)) params->hi_int = BoundAsInteger(hi, dtype);
    }
  }
}

int CheckReduceExtremeArgs(const char* op, const KernelContext& ctx) {
  const std::string name = op;
  if (ctx.inputs.size() != 1 || ctx.outputs.size() != 2) {
    throw InvalidArgument(name + ": the kernel expects 1 input and 2 outputs, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  const TensorArg& x = ctx.inputs[0];
  CheckStrides(op, "input", x);
  CheckStrides(op, "values", ctx.outputs[0]);
  CheckStrides(op, "indices", ctx.outputs[1]);
  const int ndim = x.shape.ndim();
  const int64_t dim = WrapKernelDim(name, ctx.attributes.get_int("dim"), ndim);
  std::vector<int64_t> keep(x.shape.begin(), x.shape.end());
  if (ndim > 0) {
    if (keep[static_cast<size_t>(dim)] == 0) {
      throw InvalidArgument(name + ": the input has no elements along dim " + std::to_string(dim) +
                            " (shape " + x.shape.str() + "): the reduction has no identity");
    }
    keep[static_cast<size_t>(dim)] = 1;
  }
  const Shape want(keep);
  for (int i = 0; i < 2; ++i) {
    const TensorArg& o = ctx.outputs[static_cast<size_t>(i)];
    const char* which = i == 0 ? "values" : "indices";
    if (o.shape != want) {
      throw InvalidArgument(name + ": " + which + " shape " + o.shape.str() + " is not " +
                            want.str() + " (the input's shape with a 1 at dim " +
                            std::to_string(dim) + ")");
    }
  }
  if (ctx.outputs[0].dtype != x.dtype) {
    throw InvalidArgument(name + ": values dtype " + to_string(ctx.outputs[0].dtype) +
                          " differs from input dtype " + to_string(x.dtype));
  }
  if (ctx.outputs[1].dtype != DType::kInt64) {
    throw InvalidArgument(name + ": indices dtype " + to_string(ctx.outputs[1].dtype) +
                          " is not int64");
  }
  return static_cast<int>(dim);
}

GemmPlan CheckMatmulArgs(const char* op, const KernelContext& ctx) {
  const std::string name = op;
  const bool batched = name == "bmm";
  const int rank = batched ? 3 : 2;
  if (ctx.inputs.size() != 2 || ctx.outputs.size() != 1) {
    throw InvalidArgument(name + ": the kernel expects 2 inputs and 1 output, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  const TensorArg& a = ctx.inputs[0];
  const TensorArg& b = ctx.inputs[1];
  const TensorArg& c = ctx.outputs[0];
  CheckStrides(op, "input a", a);
  CheckStrides(op, "input b", b);
  CheckStrides(op, "output", c);
  const char* names[3] = {"input a", "input b", "output"};
  const TensorArg* args[3] = {&a, &b, &c};
  for (int i = 0; i < 3; ++i) {
    if (args[i]->shape.ndim() != rank) {
      throw InvalidArgument(name + ": " + names[i] + " has shape " + args[i]->shape.str() +
                            ", expected " + std::to_string(rank) + " dims");
    }
  }
  if (a.dtype != b.dtype || c.dtype != a.dtype) {
    throw InvalidArgument(name + ": dtypes " + to_string(a.dtype) + ", " + to_string(b.dtype) +
                          " and output " + to_string(c.dtype) + " differ");
  }
  if (a.dtype == DType::kBool) {
    throw InvalidArgument(name + ": dtype bool is not supported (an integer or float dtype is)");
  }
  const int o = batched ? 1 : 0;  // the first matrix dim
  GemmPlan plan;
  plan.batch = batched ? a.shape[0] : 1;
  plan.m = a.shape[o];
  plan.k = a.shape[o + 1];
  plan.n = b.shape[o + 1];
  if (b.shape[o] != plan.k || (batched && b.shape[0] != plan.batch)) {
    throw InvalidArgument(name + ": input shapes " + a.shape.str() + " and " + b.shape.str() +
                          " cannot be multiplied");
  }
  const Shape want = batched ? Shape({plan.batch, plan.m, plan.n}) : Shape({plan.m, plan.n});
  if (c.shape != want) {
    throw InvalidArgument(name + ": output shape " + c.shape.str() + " is not " + want.str());
  }
  int64_t expect = 1;
  bool contiguous = true;  // (an empty output has nothing to lay out)
  for (int d = rank - 1; d >= 0 && c.shape.numel() > 0; --d) {
    if (c.shape[d] != 1 && c.stride[d] != expect) contiguous = false;
    expect *= c.shape[d];
  }
  if (!contiguous) {
    throw InvalidArgument(name + ": the output must be contiguous, got strides " + c.stride.str());
  }
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  for (int i = 0; i < 2; ++i) {
    const TensorArg& x = *args[i];
    GemmOperand* layout = i == 0 ? &plan.a : &plan.b;
    if (!GemmLayoutOf(x.shape[o], x.shape[o + 1], x.stride[o], x.stride[o + 1], layout)) {
      throw InvalidArgument(name + ": " + names[i] + " (shape " + x.shape.str() + ", strides " +
                            x.stride.str() +
                            ") is neither row- nor column-major: make it contiguous first");
    }
    if (layout->ld > kIntMax) {
      throw InvalidArgument(name + ": " + names[i] + "'s leading dimension " +
                            std::to_string(layout->ld) + " exceeds 2^31 - 1 (BLAS takes int)");
    }
  }
  plan.a_batch_stride = batched && plan.batch > 1 ? a.stride[0] : 0;
  plan.b_batch_stride = batched && plan.batch > 1 ? b.stride[0] : 0;
  if (plan.m > kIntMax || plan.n > kIntMax || plan.k > kIntMax) {
    throw InvalidArgument(name + ": sizes m=" + std::to_string(plan.m) +
                          ", n=" + std::to_string(plan.n) + ", k=" + std::to_string(plan.k) +
                          " exceed 2^31 - 1 (BLAS takes int)");
  }
  return plan;
}

int CheckSoftmaxArgs(const char* op, const KernelContext& ctx) {
  const std::string name = op;
  CheckUnaryOperands(op, ctx);
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  if (!is_floating_point(x.dtype)) {
    throw InvalidArgument(name + ": dtype " + to_string(x.dtype) +
                          " is not supported (a float dtype is)");
  }
  if (out.dtype != x.dtype) {
    throw InvalidArgument(name + ": output dtype " + to_string(out.dtype) +
                          " differs from input dtype " + to_string(x.dtype));
  }
  if (out.shape != x.shape) {
    throw InvalidArgument(name + ": output shape " + out.shape.str() +
                          " differs from input shape " + x.shape.str());
  }
  const int ndim = x.shape.ndim();
  const int64_t dim = WrapKernelDim(name, ctx.attributes.get_int("dim"), ndim);
  return static_cast<int>(dim);
}

namespace {

// The index of gather/scatter_add against `other` (x or self): int64, the same number of dims, each
// dim but `dim` at most other's.
void CheckIndexAgainst(const char* op, const TensorArg& index, const TensorArg& other,
                       const char* other_name, int dim) {
  const std::string name = op;
  if (index.dtype != DType::kInt64) {
    throw InvalidArgument(name + ": index dtype " + to_string(index.dtype) + " is not int64");
  }
  if (index.shape.ndim() != other.shape.ndim()) {
    throw InvalidArgument(name + ": index has " + std::to_string(index.shape.ndim()) + " dims, " +
                          other_name + " " + std::to_string(other.shape.ndim()) +
                          " (they must have the same number)");
  }
  for (int d = 0; d < index.shape.ndim(); ++d) {
    if (d != dim && index.shape[d] > other.shape[d]) {
      throw InvalidArgument(name + ": index shape " + index.shape.str() + " is larger than " +
                            other_name + " shape " + other.shape.str() + " in dim " +
                            std::to_string(d) + " (only dim " + std::to_string(dim) + " may be)");
    }
  }
}

}  // namespace

int CheckGatherArgs(const KernelContext& ctx) {
  if (ctx.inputs.size() != 2 || ctx.outputs.size() != 1) {
    throw InvalidArgument("gather: the kernel expects 2 inputs and 1 output, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& index = ctx.inputs[1];
  const TensorArg& out = ctx.outputs[0];
  CheckStrides("gather", "input", x);
  CheckStrides("gather", "index", index);
  CheckStrides("gather", "output", out);
  const int dim =
      static_cast<int>(WrapKernelDim("gather", ctx.attributes.get_int("dim"), x.shape.ndim()));
  CheckIndexAgainst("gather", index, x, "input", dim);
  if (out.shape != index.shape || out.dtype != x.dtype) {
    throw InvalidArgument("gather: output " + out.shape.str() + " " + to_string(out.dtype) +
                          " is not the index's shape " + index.shape.str() + " in the input's " +
                          "dtype " + to_string(x.dtype));
  }
  return dim;
}

int CheckScatterAddArgs(const KernelContext& ctx) {
  if (ctx.inputs.size() != 3 || ctx.outputs.size() != 1) {
    throw InvalidArgument("scatter_add: the kernel expects 3 inputs and 1 output, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  const TensorArg& self = ctx.inputs[0];
  const TensorArg& index = ctx.inputs[1];
  const TensorArg& src = ctx.inputs[2];
  const TensorArg& out = ctx.outputs[0];
  CheckStrides("scatter_add", "self", self);
  CheckStrides("scatter_add", "index", index);
  CheckStrides("scatter_add", "src", src);
  CheckStrides("scatter_add", "output", out);
  const int dim = static_cast<int>(
      WrapKernelDim("scatter_add", ctx.attributes.get_int("dim"), self.shape.ndim()));
  CheckIndexAgainst("scatter_add", index, self, "self", dim);
  if (src.dtype != self.dtype || out.dtype != self.dtype || out.shape != self.shape) {
    throw InvalidArgument("scatter_add: src " + to_string(src.dtype) + " and output " +
                          out.shape.str() + " " + to_string(out.dtype) +
                          " must have self's dtype " + to_string(self.dtype) + " (and the " +
                          "output self's shape " + self.shape.str() + ")");
  }
  if (self.dtype == DType::kBool) {
    throw InvalidArgument(
        "scatter_add: dtype bool is not supported (an integer or float dtype is)");
  }
  if (src.shape.ndim() != index.shape.ndim()) {
    throw InvalidArgument("scatter_add: src has " + std::to_string(src.shape.ndim()) +
                          " dims, index " + std::to_string(index.shape.ndim()) +
                          " (they must have the same number)");
  }
  for (int d = 0; d < index.shape.ndim(); ++d) {
    if (index.shape[d] > src.shape[d]) {
      throw InvalidArgument("scatter_add: index shape " + index.shape.str() +
                            " is larger than src shape " + src.shape.str() + " in dim " +
                            std::to_string(d));
    }
  }
  return dim;
}

void CheckFillArgs(const KernelContext& ctx) {
  if (!ctx.inputs.empty() || ctx.outputs.size() != 1) {
    throw InvalidArgument("fill: the kernel expects no inputs and 1 output, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  const AttrSchema* s = ctx.attributes.schema();
  const int value = s == nullptr ? -1 : s->index("value");
  if (value < 0 || s->defs()[static_cast<size_t>(value)].type != AttrType::kScalar) {
    throw InvalidArgument(
        "fill: the kernel expects a scalar attribute 'value', got the attributes " +
        (s == nullptr ? std::string("none") : s->str()));
  }
  CheckStrides("fill", "output", ctx.outputs[0]);
}

}  // namespace ofl::kernels
