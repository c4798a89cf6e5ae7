// SBP rules as pure functions: how a global tensor's logical shape maps to each rank's physical
// shard, and which output SBP expand, repeat and reshape (and the backward of expand and repeat)
// give for an input SBP, with the physical arguments each rank passes to the local op. No MPI, no
// memory, no threads. A std::nullopt result means "no SBP passes through: box the input to
// broadcast first" (the caller does that; the op on broadcast inputs then gives broadcast).
// Every error is an InvalidArgument whose message names the op, the argument and the values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "oneflow_lite/attrs.h"
#include "oneflow_lite/placement.h"
#include "oneflow_lite/shape.h"

namespace ofl::ops {

struct SplitRange {
  int64_t start;
  int64_t size;
};

// Part `index` of n elements split over `parts`, OneFlow's BalancedSplitter: every part gets
// n / parts and the first n % parts parts one more (10 over 4: 3,3,2,2; 2 over 4: 1,1,0,0, so
// shards may be empty). Requires n >= 0, parts >= 1 and 0 <= index < parts.
SplitRange BalancedSplit(int64_t n, int parts, int index);

// The shape of shard `index` of `parts`: split(a) takes BalancedSplit of dim a; broadcast and
// partial_sum keep the logical shape. Throws when a split axis is >= the logical rank.
Shape PhysicalShape(const Shape& logical, const Sbp& sbp, int parts, int index);

// expand: logical_out is the already-inferred expanded shape (rank >= logical_in's, input dims
// right-aligned). A split on a kept input dim i becomes split(i + out_rank - in_rank); broadcast
// and partial_sum (expand is linear) pass through. A split on a dim of size 1 that is broadcast to
// another size throws: its shards cannot be expanded locally, the caller must box to broadcast.
Sbp InferExpandSbp(const Shape& logical_in, const Sbp& in, const Shape& logical_out);

// The sizes each rank passes to a local expand of its physical input: logical_out, with the split
// output dim (if any) replaced by physical_in's size on the split input dim. The local output is
// then exactly the shard of the logical output under InferExpandSbp's SBP.
std::vector<int64_t> PhysicalExpandSizes(const Shape& logical_in, const Sbp& in,
                                         const Shape& logical_out, const Shape& physical_in);

// repeat: with the input shape left-padded with 1s to repeats.size(), a split on dim a whose
// repeat is 1 passes through as split(a + pad); broadcast and partial_sum pass through (repeat is
// linear). A split on a dim whose repeat is not 1 (0 included) gives nullopt: the tiles of a
// split dim interleave the shards. Each rank passes the logical repeats to its local repeat
// unchanged (a passing split dim has repeat 1), so there is no PhysicalRepeats.
std::optional<Sbp> InferRepeatSbp(const Shape& logical_in, const Sbp& in, IntList repeats);

// reshape (logical_out has logical_in's element count): broadcast and partial_sum pass through. A
// split on input dim a passes as split(b) for the first output dim b with the same size and the
// same product of the dims before it: every shard then reshapes locally to the matching shard of
// the output, for any number of ranks, even or not. Otherwise nullopt. (OneFlow also passes a
// split on the first dim of a merged group when both sizes divide by the rank count; that needs
// the rank count and is not done here.)
std::optional<Sbp> InferReshapeSbp(const Shape& logical_in, const Sbp& in,
                                   const Shape& logical_out);

// expand backward (dx = dy summed over the dims expand created or broadcast; logical_dy is the
// expanded shape): broadcast stays broadcast and partial_sum stays partial_sum. A split on a kept
// dim maps back to split(a - (dy_rank - in_rank)). A split on a new leading dim or a broadcast dim
// gives partial_sum: each rank sums only its part of the reduced dim into a full-shape result.
// Each rank then reduces its dy shard to PhysicalShape(logical_in, result, ...).
Sbp InferExpandBackwardSbp(const Sbp& dy, const Shape& logical_dy, const Shape& logical_in);

// repeat backward (dx = the sum of dy's tiles; dy's logical shape is InferRepeat(logical_in,
// repeats)): broadcast and partial_sum pass through; a split on a dim whose repeat is 1 maps back
// to split(a - pad). A split on a repeated dim is a partial sum only when every shard holds whole
// tiles whatever the rank count, which holds exactly when a tile is at most one element thick on
// that dim (a new leading dim, or an input size of 1 or 0): then partial_sum. Otherwise nullopt
// (a shard boundary may cut a tile: 2 tiles of 3 over 4 ranks are 2,2,1,1).
std::optional<Sbp> InferRepeatBackwardSbp(const Sbp& dy, const Shape& logical_in, IntList repeats);

// The repeats each rank passes to a local repeat backward of its physical dy shard, for an SBP
// InferRepeatBackwardSbp accepts: the logical repeats, except that a split dy dim turned into
// partial_sum repeats its tile (at most one element thick there) physical_dy[a] times: the shard's
// own tile count.
// The local input shape is PhysicalShape(logical_in, InferRepeatBackwardSbp(...), ...).
std::vector<int64_t> PhysicalRepeatBackwardRepeats(const Sbp& dy, const Shape& logical_in,
                                                   IntList repeats, const Shape& physical_dy);

// How an op of several inputs runs on global tensors (every input global over one placement):
// what each rank knows of the call, the same on every rank.
struct GlobalInputs {
  const std::vector<Shape>& logical_in;
  const std::vector<Sbp>& in_sbp;
  const Shape& logical_out;
  const Attrs& attrs;
};
// The SBPs the inputs are boxed to (each rank then runs the local op on its shards, with the
// call's attributes) and the output's SBP under them.
struct SbpSignature {
  std::vector<Sbp> in;
  Sbp out = Sbp::broadcast();
};

// A reduction over the dims `reduced` marks (sum, mean, amax, logsumexp, softmax's rows): broadcast
// stays broadcast; a split on a kept dim passes (moved down past the dropped dims unless keepdim);
// a split on a reduced dim gives partial_sum when split_gives_partial (sum: each rank sums its
// part into a full-shape result), else nullopt (box to broadcast first); partial_sum passes when
// partial_passes (a linear reduction: sum, mean), else nullopt.
std::optional<Sbp> InferReduceSbp(const Sbp& in, const std::vector<bool>& reduced, bool keepdim,
                                  bool split_gives_partial, bool partial_passes);

// Which inputs of an elementwise op may be partial_sum: those the op is linear in, with the
// others as the op needs them.
enum class PartialInputs : uint8_t {
  kNone,   // no partial_sum passes (comparisons, maximum, exp, ...)
  kAll,    // every input partial_sum gives partial_sum (add and sub: P + P, P - P; neg: -P)
  kOne,    // one input partial_sum and the others broadcast (mul: P * B)
  kFirst,  // input 0 partial_sum and the others broadcast (div: P / B)
};

// A single-input elementwise op: a split or broadcast passes through; partial_sum passes when the
// op is linear (kAll), else nullopt (box to broadcast first).
std::optional<Sbp> ElementwiseUnarySbp(const Sbp& in, PartialInputs partial);

// An elementwise op over inputs broadcast to logical_out (numpy's right-aligned rule): the
// signature reached with the fewest bytes moved by boxing. Candidates: split(d) for every output
// dim d that an input splits at full size (every input then split on its own dim d where it has
// d's full size, broadcast where it has size 1 or no such dim), partial_sum as `partial` allows
// (only when an input is partial_sum already), and broadcast for all. The costs, in elements of
// the input boxed, follow the collectives boxing runs: S->B and S->S(other) and P->S one tensor,
// P->B two (an all-reduce), B->S, B->P and S->P none (local). Ties go as CheapestSignature's, in
// the order above, so every rank picks the same.
SbpSignature ElementwiseSignature(const GlobalInputs& call, PartialInputs partial);

// Of `candidates` (each a complete signature), the one reached with the fewest elements moved by
// boxing the inputs (ElementwiseSignature's costs), then with the fewest inputs boxed at all (B x B
// stays B where slicing both would cost nothing too); remaining ties go to the earlier one.
// Requires at least one candidate.
SbpSignature CheapestSignature(const GlobalInputs& call, std::vector<SbpSignature> candidates);

// The matrix product a (m,k) x b (k,n), or batched (bs,m,k) x (bs,k,n): OneFlow's signatures,
// rows split times broadcast gives rows split (S(0) x B -> S(0), data parallel), broadcast times
// columns split gives columns split (B x S(1) -> S(1), a column-parallel weight), the reduced dim
// split on both gives partial sums (S(1) x S(0) -> P, row-parallel), a partial_sum times a
// broadcast gives partial_sum, and B x B -> B; batched, the batch dim split on both passes too.
SbpSignature MatmulSignature(const GlobalInputs& call, bool batched);

// linear(x (N,in), weight (out,in), bias (out)): matmul's signatures with the weight transposed,
// the bias following the output's columns (S(0) where the output is S(1)) or added once where
// the output is partial (bias P: the first rank holds it, the others zeros).
SbpSignature LinearSignature(const GlobalInputs& call);

// permute(dims): a split on input dim a becomes a split on the output dim j with dims[j] == a;
// broadcast and partial_sum pass. dims is a permutation of the input's dims (checked by the op).
Sbp InferPermuteSbp(const Sbp& in, IntList dims);

}  // namespace ofl::ops
