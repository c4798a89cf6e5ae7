// The in-place ops: add_, sub_, mul_, div_ (a tensor operand, cast to the tensor's dtype at the
// entry when the result type may be written into it; a number reaches them as a 0-dim tensor of
// the target's dtype), copy_ (from any dtype), fill_ and zero_. Each writes input 0's own view with
// the kernel of its out-of-place form, the source seen as the target's shape (broadcast). The
// arithmetic ones take their out-of-place op's backward (a recorded add_ is an AddBackward node,
// as in PyTorch); copy_ sends the gradient to the source only, fill_ and zero_ to neither.
#include <string>
#include <vector>

#include "ops/grad_util.h"
#include "ops/op_schema.h"
#include "ops/write_op.h"

namespace ofl::ops {
namespace {

void CheckSourceDType(const std::string& op, const std::vector<TensorMeta>& in) {
  if (in[1].dtype != in[0].dtype) {
    throw InvalidArgument(op + ": the source's dtype " + to_string(in[1].dtype) +
                          " differs from the tensor's " + to_string(in[0].dtype) +
                          " (no conversion)");
  }
}

// add_, sub_, mul_, div_: a result the tensor's dtype holds, as PyTorch requires of an in-place
// result (bool holds no arithmetic result here; an integer holds no true division). Refused at
// the call, so the tensor and its views keep their data.
OpSchema Arithmetic(const char* name, const char* of, bool division) {
  OpSchema op;
  op.name = name;
  op.num_inputs = 2;
  op.form = InPlaceForm{/*kernel=*/of, /*reads_target=*/true, /*node_op=*/of};
  // The source is cast to the tensor's dtype at the entry, when the result type allows it.
  op.input_cast = division ? InputCast::kToTargetDivision : InputCast::kToTarget;
  op.infer = [name = std::string(name), division](const std::vector<TensorMeta>& in, const Attrs&) {
    const DType t = in[0].dtype;
    if (t == DType::kBool) {
      throw InvalidArgument(name +
                            ": the tensor's dtype is bool, and arithmetic on bool is not "
                            "supported (its result is no bool); the tensor is unchanged");
    }
    if (division && !is_floating_point(t)) {
      throw InvalidArgument(name + ": the tensor's dtype " + to_string(t) +
                            " cannot hold the result of a true division (a floating value); "
                            "the tensor is unchanged");
    }
    CheckSourceDType(name, in);
    return std::vector<TensorMeta>{in[0]};
  };
  return op;
}

OpSchema MakeAddInplace() { return Arithmetic("add_", "add", false); }
OpSchema MakeSubInplace() { return Arithmetic("sub_", "sub", false); }
OpSchema MakeMulInplace() { return Arithmetic("mul_", "mul", false); }
OpSchema MakeDivInplace() { return Arithmetic("div_", "div", true); }

OpSchema MakeCopyInplace() {
  OpSchema op;
  op.name = "copy_";
  op.num_inputs = 2;
  op.form = InPlaceForm{/*kernel=*/"copy", /*reads_target=*/false, /*node_op=*/""};
  op.input_cast = InputCast::kToTargetAlways;  // copy_ converts any dtype, as PyTorch's
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) {
    CheckSourceDType("copy_", in);
    return std::vector<TensorMeta>{in[0]};
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    std::vector<Tensor> dx(2);
    if (ctx.needs(1)) dx[1] = SumTo(g[0], ctx.input_info[1].shape);
    return dx;
  };
  return op;
}

// fill_ and zero_: attribute value (scalar), checked by the caller against the tensor's dtype;
// the "fill" kernel (extension.h) writes it.
OpSchema Fill(const char* name) {
  return MakeWriteOp(name, "fill", {{"value", AttrType::kScalar}});
}

OpSchema MakeFillInplace() { return Fill("fill_"); }
OpSchema MakeZeroInplace() { return Fill("zero_"); }

OFL_REGISTER_OP(MakeAddInplace);
OFL_REGISTER_OP(MakeSubInplace);
OFL_REGISTER_OP(MakeMulInplace);
OFL_REGISTER_OP(MakeDivInplace);
OFL_REGISTER_OP(MakeCopyInplace);
OFL_REGISTER_OP(MakeFillInplace);
OFL_REGISTER_OP(MakeZeroInplace);

}  // namespace
}  // namespace ofl::ops
