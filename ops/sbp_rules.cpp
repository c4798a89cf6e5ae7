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

std::optional<Sbp> InferReduceSbp(const Sbp& in, const std::vector<bool>& reduced, bool keepdim,
                                  bool split_gives_partial, bool partial_passes) {
  if (in.is_broadcast()) return in;
  if (in.is_partial_sum()) return partial_passes ? std::optional<Sbp>(in) : std::nullopt;
  const int a = in.axis();
  if (a < static_cast<int>(reduced.size()) && reduced[static_cast<size_t>(a)]) {
    return split_gives_partial ? std::optional<Sbp>(Sbp::partial_sum()) : std::nullopt;
  }
  if (keepdim) return in;
  int dropped = 0;
  for (int d = 0; d < a; ++d) dropped += reduced[static_cast<size_t>(d)] ? 1 : 0;
  return Sbp::split(a - dropped);
}

std::optional<Sbp> ElementwiseUnarySbp(const Sbp& in, PartialInputs partial) {
  if (in.is_partial_sum() && partial != PartialInputs::kAll) return std::nullopt;
  return in;
}

namespace {

// Elements moved (in units of the input's element count) to box `from` into `to`; the collective
// each boxing runs is docs/global-tensors.md's.
double BoxingCost(const Sbp& from, const Sbp& to, double n) {
  if (from == to || to.is_partial_sum()) return 0;  // S->P and B->P fill locally
  if (to.is_broadcast()) return from.is_partial_sum() ? 2 * n : n;
  return from.is_broadcast() ? 0 : n;  // to a split: B slices locally; P and S(other) move
}

// The input's dim under output dim d (right-aligned), or -1 when it has none or is broadcast
// along it (size 1 where the output's is not).
int AlignedSplitDim(const Shape& in, const Shape& out, int d) {
  const int a = d - (out.ndim() - in.ndim());
  if (a < 0 || in[a] != out[d]) return -1;
  return a;
}

}  // namespace

SbpSignature ElementwiseSignature(const GlobalInputs& call, PartialInputs partial) {
  const std::vector<Shape>& in = call.logical_in;
  const std::vector<Sbp>& sbp = call.in_sbp;
  const Shape& out = call.logical_out;
  const size_t n = in.size();
  std::vector<SbpSignature> candidates;
  // split(d) for each output dim an input splits at full size, in input order.
  for (size_t i = 0; i < n; ++i) {
    if (!sbp[i].is_split()) continue;
    const int d = sbp[i].axis() + (out.ndim() - in[i].ndim());
    if (d < 0 || AlignedSplitDim(in[i], out, d) < 0) continue;
    bool seen = false;
    for (const SbpSignature& c : candidates) seen = seen || c.out == Sbp::split(d);
    if (seen) continue;
    SbpSignature c{{}, Sbp::split(d)};
    for (size_t j = 0; j < n; ++j) {
      const int a = AlignedSplitDim(in[j], out, d);
      c.in.push_back(a < 0 ? Sbp::broadcast() : Sbp::split(a));
    }
    candidates.push_back(std::move(c));
  }
  // partial_sum, where an input is partial_sum already and the op is linear in it.
  for (size_t i = 0; i < n && partial != PartialInputs::kNone; ++i) {
    if (!sbp[i].is_partial_sum()) continue;
    if (partial == PartialInputs::kFirst && i != 0) continue;
    SbpSignature c{std::vector<Sbp>(n, Sbp::broadcast()), Sbp::partial_sum()};
    if (partial == PartialInputs::kAll) {
      c.in.assign(n, Sbp::partial_sum());
    } else {
      c.in[i] = Sbp::partial_sum();
    }
    candidates.push_back(std::move(c));
    if (partial == PartialInputs::kAll) break;
  }
  candidates.push_back(SbpSignature{std::vector<Sbp>(n, Sbp::broadcast()), Sbp::broadcast()});
  return CheapestSignature(call, std::move(candidates));
}

SbpSignature CheapestSignature(const GlobalInputs& call, std::vector<SbpSignature> candidates) {
  size_t best = 0;
  double best_cost = 0;
  int best_changes = 0;
  for (size_t k = 0; k < candidates.size(); ++k) {
    double cost = 0;
    int changes = 0;
    for (size_t j = 0; j < call.in_sbp.size(); ++j) {
      cost += BoxingCost(call.in_sbp[j], candidates[k].in[j],
                         static_cast<double>(call.logical_in[j].numel()));
      changes += call.in_sbp[j] != candidates[k].in[j] ? 1 : 0;
    }
    if (k == 0 || cost < best_cost || (cost == best_cost && changes < best_changes)) {
      best = k;
      best_cost = cost;
      best_changes = changes;
    }
  }
  return std::move(candidates[best]);
}

SbpSignature MatmulSignature(const GlobalInputs& call, bool batched) {
  const Sbp kB = Sbp::broadcast(), kP = Sbp::partial_sum();
  const int o = batched ? 1 : 0;  // the rows' dim
  std::vector<SbpSignature> c = {
      {{Sbp::split(o), kB}, Sbp::split(o)},
      {{kB, Sbp::split(o + 1)}, Sbp::split(o + 1)},
      {{Sbp::split(o + 1), Sbp::split(o)}, kP},
      {{kP, kB}, kP},
      {{kB, kP}, kP},
  };
  if (batched) c.insert(c.begin(), SbpSignature{{Sbp::split(0), Sbp::split(0)}, Sbp::split(0)});
  c.push_back(SbpSignature{{kB, kB}, kB});
  return CheapestSignature(call, std::move(c));
}

SbpSignature LinearSignature(const GlobalInputs& call) {
  const Sbp kB = Sbp::broadcast(), kP = Sbp::partial_sum();
  const Sbp s0 = Sbp::split(0), s1 = Sbp::split(1);
  return CheapestSignature(call, {
                                     {{s0, kB, kB}, s0},  // data parallel
                                     {{kB, s0, s0}, s1},  // column parallel
                                     {{s1, s1, kP}, kP},  // row parallel
                                     {{kP, kB, kP}, kP},
                                     {{kB, kB, kB}, kB},
                                 });
}

Sbp InferPermuteSbp(const Sbp& in, IntList dims) {
  if (!in.is_split()) return in;
  const int64_t n = static_cast<int64_t>(dims.size());
  for (int64_t j = 0; j < n; ++j) {
    const int64_t d = dims[j] < 0 ? dims[j] + n : dims[j];
    if (d == in.axis()) return Sbp::split(static_cast<int>(j));
  }
  Fail("permute: split axis " + Str(in.axis()) + " is not among dims " + Str(dims));
}

}  // namespace ofl::ops
