#include "ops/sbp_rules.h"

#include <algorithm>
#include <string>

#include "oneflow_lite/error.h"
#include "ops/array_ops.h"

namespace ofl::ops {

namespace {

[[noreturn]] void Fail(const std::string& msg) { throw InvalidArgument(msg); }

std::string Str(const Shape& s) { return s.str(); }
std::string Str(IntList v) { return ToString(v.data(), v.size()); }
std::string Str(int64_t v) { return std::to_string(v); }

// Throws unless `sbp` is not a split or splits an axis below the rank of `shape`.
void CheckSplitAxis(const char* op, const char* arg, const Sbp& sbp, const Shape& shape) {
  if (sbp.is_split() && sbp.axis() >= shape.ndim()) {
    Fail(std::string(op) + ": split axis " + Str(sbp.axis()) + " of " + arg + " sbp " + sbp.str() +
         " is out of range for logical shape " + Str(shape) + " with " + Str(shape.ndim()) +
         " dims");
  }
}

// Product of dims [begin, end), saturated like Shape::numel (callers compare, never index).
int64_t Product(const Shape& s, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) {
    if (s[i] == 0) return 0;
    p = SaturatingMul(p, s[i]);
  }
  return p;
}

// Throws unless logical_out is logical_in expanded (right-aligned; a dim keeps its size or is 1).
void CheckExpandShapes(const Shape& in, const Shape& out) {
  const int pad = out.ndim() - in.ndim();
  if (pad < 0) {
    Fail("expand: logical_out " + Str(out) + " has fewer dims than logical_in " + Str(in));
  }
  for (int i = 0; i < in.ndim(); ++i) {
    if (in[i] != out[i + pad] && in[i] != 1) {
      Fail("expand: logical_out " + Str(out) + " is not an expansion of logical_in " + Str(in) +
           ": input dim " + Str(i) + " has size " + Str(in[i]) + ", output dim " + Str(i + pad) +
           " has size " + Str(out[i + pad]));
    }
  }
}

}  // namespace

SplitRange BalancedSplit(int64_t n, int parts, int index) {
  if (n < 0) Fail("BalancedSplit: n " + Str(n) + " must be >= 0");
  if (parts < 1) Fail("BalancedSplit: parts " + Str(parts) + " must be >= 1");
  if (index < 0 || index >= parts) {
    Fail("BalancedSplit: index " + Str(index) + " is out of range [0, " + Str(parts - 1) +
         "] for parts " + Str(parts));
  }
  const int64_t base = n / parts;
  const int64_t extra = n % parts;
  const int64_t size = base + (index < extra ? 1 : 0);
  const int64_t start = base * index + std::min<int64_t>(index, extra);
  return {start, size};
}

Shape PhysicalShape(const Shape& logical, const Sbp& sbp, int parts, int index) {
  if (parts < 1 || index < 0 || index >= parts) {
    Fail("PhysicalShape: index " + Str(index) + " and parts " + Str(parts) +
         " must satisfy 0 <= index < parts");
  }
  CheckSplitAxis("PhysicalShape", "the", sbp, logical);
  Shape out = logical;
  if (sbp.is_split()) {
    const int a = sbp.axis();
    if (logical[a] < 0) {
      Fail("PhysicalShape: logical shape " + Str(logical) + " has negative size " +
           Str(logical[a]) + " at split axis " + Str(a));
    }
    out[a] = BalancedSplit(logical[a], parts, index).size;
  }
  return out;
}

Sbp InferExpandSbp(const Shape& logical_in, const Sbp& in, const Shape& logical_out) {
  CheckExpandShapes(logical_in, logical_out);
  CheckSplitAxis("expand", "the input", in, logical_in);
  if (!in.is_split()) return in;
  const int i = in.axis();
  const int a = i + logical_out.ndim() - logical_in.ndim();
  if (logical_in[i] != logical_out[a]) {
    Fail("expand: cannot expand a tensor split on dim " + Str(i) + " (sbp " + in.str() +
         ") whose logical size 1 is broadcast to " + Str(logical_out[a]) + " (output dim " +
         Str(a) + "); box it to broadcast first; logical_in " + Str(logical_in) + ", logical_out " +
         Str(logical_out));
  }
  return Sbp::split(a);
}

std::vector<int64_t> PhysicalExpandSizes(const Shape& logical_in, const Sbp& in,
                                         const Shape& logical_out, const Shape& physical_in) {
  const Sbp out_sbp = InferExpandSbp(logical_in, in, logical_out);
  bool matches = physical_in.ndim() == logical_in.ndim();
  for (int i = 0; matches && i < logical_in.ndim(); ++i) {
    const bool split_dim = in.is_split() && in.axis() == i;
    matches = split_dim ? physical_in[i] >= 0 && physical_in[i] <= logical_in[i]
                        : physical_in[i] == logical_in[i];
  }
  if (!matches) {
    Fail("expand: physical_in " + Str(physical_in) + " cannot be a shard of logical_in " +
         Str(logical_in) + " under sbp " + in.str());
  }
  std::vector<int64_t> sizes = logical_out.vec();
  if (out_sbp.is_split()) sizes[out_sbp.axis()] = physical_in[in.axis()];
  return sizes;
}

std::optional<Sbp> InferRepeatSbp(const Shape& logical_in, const Sbp& in, IntList repeats) {
  InferRepeat(logical_in, repeats, 1);  // throws the repeat errors
  CheckSplitAxis("repeat", "the input", in, logical_in);
  if (!in.is_split()) return in;
  const int a = in.axis() + static_cast<int>(repeats.size()) - logical_in.ndim();
  if (repeats[a] != 1) return std::nullopt;
  return Sbp::split(a);
}

std::optional<Sbp> InferReshapeSbp(const Shape& logical_in, const Sbp& in,
                                   const Shape& logical_out) {
  if (logical_in.numel() != logical_out.numel()) {
    Fail("reshape: logical_out " + Str(logical_out) + " has " + Str(logical_out.numel()) +
         " elements, logical_in " + Str(logical_in) + " has " + Str(logical_in.numel()));
  }
  CheckSplitAxis("reshape", "the input", in, logical_in);
  if (!in.is_split()) return in;
  const int a = in.axis();
  // With the same element count, equal leading products and sizes leave equal trailing products
  // too (or no elements at all), so shard r of the input reshapes locally to shard r of the output.
  const int64_t before = Product(logical_in, 0, a);
  for (int b = 0; b < logical_out.ndim(); ++b) {
    if (logical_out[b] == logical_in[a] && Product(logical_out, 0, b) == before) {
      return Sbp::split(b);
    }
  }
  return std::nullopt;
}

Sbp InferExpandBackwardSbp(const Sbp& dy, const Shape& logical_dy, const Shape& logical_in) {
  InferExpandBackward(logical_dy, logical_in);  // throws unless logical_in expands to logical_dy
  CheckSplitAxis("expand_backward", "dy", dy, logical_dy);
  if (!dy.is_split()) return dy;
  const int i = dy.axis() - (logical_dy.ndim() - logical_in.ndim());
  // A new leading dim, or a size-1 dim expand broadcast: reduced away, so each rank's sum covers
  // only its part.
  if (i < 0 || logical_in[i] != logical_dy[dy.axis()]) return Sbp::partial_sum();
  return Sbp::split(i);
}

std::optional<Sbp> InferRepeatBackwardSbp(const Sbp& dy, const Shape& logical_in, IntList repeats) {
  const Shape logical_dy = InferRepeat(logical_in, repeats, 1);  // throws the repeat errors
  CheckSplitAxis("repeat_backward", "dy", dy, logical_dy);
  if (!dy.is_split()) return dy;
  const int a = dy.axis();
  const int i = a - (logical_dy.ndim() - logical_in.ndim());
  if (i < 0) return Sbp::partial_sum();  // a new leading dim: tiles one element thick
  if (repeats[a] == 1) return Sbp::split(i);
  if (logical_in[i] <= 1) return Sbp::partial_sum();
  return std::nullopt;
}

std::vector<int64_t> PhysicalRepeatBackwardRepeats(const Sbp& dy, const Shape& logical_in,
                                                   IntList repeats, const Shape& physical_dy) {
  const std::optional<Sbp> dx = InferRepeatBackwardSbp(dy, logical_in, repeats);
  if (!dx) {
    Fail("repeat_backward: dy sbp " + dy.str() + " splits a repeated dim (repeats " + Str(repeats) +
         ", logical_in " + Str(logical_in) +
         "); box dy to broadcast first, there are no physical repeats for it");
  }
  if (physical_dy.ndim() != static_cast<int>(repeats.size())) {
    Fail("repeat_backward: physical_dy " + Str(physical_dy) + " has " + Str(physical_dy.ndim()) +
         " dims, repeats " + Str(repeats) + " has " + Str(repeats.size()));
  }
  std::vector<int64_t> out = repeats.vec();
  if (dy.is_split() && dx->is_partial_sum()) out[dy.axis()] = physical_dy[dy.axis()];
  return out;
}

}  // namespace ofl::ops
