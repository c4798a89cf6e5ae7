// The "range" kernel's argument check (kernels/range.h), shared by every device's kernel.
#include <string>

#include "kernels/range.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels {

RangeSpec CheckRangeArgs(const KernelContext& ctx) {
  if (!ctx.inputs.empty() || ctx.outputs.size() != 1) {
    throw InvalidArgument("range: the kernel expects no inputs and 1 output, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.ndim() != 1 || out.stride.ndim() != 1) {
    throw InvalidArgument("range: the output must have 1 dim, got shape " + out.shape.str());
  }
  if (out.dtype == DType::kBool) {
    throw InvalidArgument("range: dtype bool is not supported");
  }
  const AttrSchema* s = ctx.attributes.schema();
  auto has = [s](const char* name, AttrType type) {
    const int i = s == nullptr ? -1 : s->index(name);
    return i >= 0 && s->defs()[static_cast<size_t>(i)].type == type;
  };
  if (!has("start", AttrType::kScalar) || !has("step", AttrType::kScalar) ||
      !has("end", AttrType::kScalar) || !has("head", AttrType::kInt)) {
    throw InvalidArgument(
        "range: the kernel expects scalar attributes 'start', 'step' and 'end' and an int 'head', "
        "got the attributes " +
        (s == nullptr ? std::string("none") : s->str()));
  }
  RangeSpec spec;
  spec.n = out.shape[0];
  spec.head = ctx.attributes.get_int("head");
  if (spec.head < 0 || spec.head > spec.n) {
    throw InvalidArgument("range: head " + std::to_string(spec.head) + " is outside 0 .. " +
                          std::to_string(spec.n));
  }
  const Scalar start = ctx.attributes.get_scalar("start");
  const Scalar step = ctx.attributes.get_scalar("step");
  const Scalar end = ctx.attributes.get_scalar("end");
  spec.integer = !is_floating_point(out.dtype) && !start.is_floating_point() &&
                 !step.is_floating_point() && start.kind() != Scalar::Kind::kUInt64 &&
                 step.kind() != Scalar::Kind::kUInt64;
  spec.start_i = spec.integer ? start.int64_value() : 0;
  spec.step_i = spec.integer ? step.int64_value() : 0;
  spec.start = start.to_double();
  spec.step = step.to_double();
  spec.end = end.to_double();
  return spec;
}

}  // namespace ofl::kernels
