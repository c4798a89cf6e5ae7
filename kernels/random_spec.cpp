// The "random" kernel's argument check (kernels/random.h), shared by every device's kernel.
#include <string>

#include "kernels/random.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels {

namespace {
bool Contiguous(const TensorArg& a) {
  int64_t expect = 1;
  for (int i = a.shape.ndim() - 1; i >= 0; --i) {
    if (a.shape[i] != 1 && a.stride[i] != expect) return false;
    expect *= a.shape[i];
  }
  return true;
}

int SignificandBits(DType d) {
  switch (d) {
    case DType::kFloat16:
      return 11;
    case DType::kBFloat16:
      return 8;
    case DType::kFloat64:
      return 53;
    default:
      return 24;
  }
}
}  // namespace

RandomSpec CheckRandomArgs(const KernelContext& ctx) {
  if (!ctx.inputs.empty() || ctx.outputs.size() != 1) {
    throw InvalidArgument("random: the kernel expects no inputs and 1 output, got " +
                          std::to_string(ctx.inputs.size()) + " and " +
                          std::to_string(ctx.outputs.size()));
  }
  const TensorArg& out = ctx.outputs[0];
  if (out.stride.ndim() != out.shape.ndim() || !Contiguous(out)) {
    throw InvalidArgument("random: the output must be contiguous, got shape " + out.shape.str() +
                          " and strides " + out.stride.str());
  }
  const AttrSchema* s = ctx.attributes.schema();
  auto has = [s](const char* name, AttrType type) {
    const int i = s == nullptr ? -1 : s->index(name);
    return i >= 0 && s->defs()[static_cast<size_t>(i)].type == type;
  };
  for (const char* name : {"dist", "seed", "offset", "low", "span"}) {
    if (!has(name, AttrType::kInt)) {
      throw InvalidArgument(std::string("random: the kernel expects int attributes dist, seed, "
                                        "offset, low and span and double attributes a and b, got "
                                        "the attributes ") +
                            (s == nullptr ? std::string("none") : s->str()));
    }
  }
  if (!has("a", AttrType::kDouble) || !has("b", AttrType::kDouble)) {
    throw InvalidArgument(
        "random: the kernel expects int attributes dist, seed, offset, low and span and double "
        "attributes a and b, got the attributes " +
        s->str());
  }
  RandomSpec spec;
  const int64_t dist = ctx.attributes.get_int("dist");
  if (dist < 0 || dist > 2) {
    throw InvalidArgument("random: dist " + std::to_string(dist) + " is not 0, 1 or 2");
  }
  spec.dist = static_cast<RandomDist>(dist);
  spec.seed = static_cast<uint64_t>(ctx.attributes.get_int("seed"));
  spec.offset = static_cast<uint64_t>(ctx.attributes.get_int("offset"));
  spec.a = ctx.attributes.get_double("a");
  spec.b = ctx.attributes.get_double("b");
  spec.low = ctx.attributes.get_int("low");
  spec.span = ctx.attributes.get_int("span");
  spec.bits = SignificandBits(out.dtype);
  if (spec.dist == RandomDist::kIntegers) {
    if (spec.span <= 0) {
      throw InvalidArgument("random: span " + std::to_string(spec.span) + " is not positive");
    }
  } else if (!is_floating_point(out.dtype)) {
    throw InvalidArgument("random: dtype " + to_string(out.dtype) +
                          " is not supported for uniform and normal draws (a float dtype is)");
  }
  return spec;
}

}  // namespace ofl::kernels
