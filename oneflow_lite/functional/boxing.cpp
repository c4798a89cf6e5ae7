// Boxing (boxing.h): SBP conversions on one placement, and placement changes.
#include "oneflow_lite/functional/boxing.h"

#include <cstring>
#include <string>
#include <vector>

#include "kernels/collective/collectives.h"
#include "kernels/collective/device_collectives.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_protocol.h"
#include "oneflow_lite/functional/global_util.h"
#include "ops/array_ops.h"
#include "ops/sbp_rules.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

namespace ofl::functional {

namespace coll = kernels::collective;

namespace {

std::vector<int64_t> AxisFirst(int ndim, int axis) {
  std::vector<int64_t> perm = {axis};
  for (int d = 0; d < ndim; ++d) {
    if (d != axis) perm.push_back(d);
  }
  return perm;
}

std::vector<int64_t> Inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

Shape Permuted(const Shape& s, const std::vector<int64_t>& perm) {
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(s[p]);
  return Shape(dims);
}

// x's axis made outermost and contiguous, so that slices along it are contiguous runs.
Tensor AxisFirstContiguous(const Tensor& x, int axis) {
  if (axis == 0) return ofl::contiguous(x);
  return ofl::contiguous(ofl::permute(x, AxisFirst(x.dim(), axis)));
}

Tensor UndoAxisFirst(const Tensor& x, int axis) {
  if (axis == 0) return x;
  return ofl::contiguous(ofl::permute(x, Inverse(AxisFirst(x.dim(), axis))));
}

}  // namespace

Tensor AllGatherAlong(const Tensor& x, int axis, const std::vector<int64_t>& sizes,
                      const Shape& logical, const Placement& p, int me, const std::string& sbps) {
  const Tensor xc = AxisFirstContiguous(x, axis);
  const Shape out_shape = Permuted(logical, AxisFirst(logical.ndim(), axis));
  const Device device = PlacementDevice(p);
  const Tensor out = NewTensor(out_shape, x.dtype(), device);
  const int64_t inner = out_shape[0] == 0 ? 0 : out_shape.numel() / out_shape[0];
  std::vector<int64_t> counts;
  for (int64_t s : sizes) counts.push_back(s * inner);
  IssueCollective(MakeFingerprint("boxing S->B (all-gather)", x.dtype(), logical, sbps, p), p,
                  {xc.impl()->arg()}, {out.impl()->arg()},
                  [counts, me, device, dtype = x.dtype(), ranks = p.ranks(), c = &CollectivesOf(p)](
                      const auto& in, const auto& o, NativeStream s) {
                    c->AllGatherV(in[0].data, counts[me], o[0].data, counts, dtype, ranks, device,
                                  s);
                  });
  return UndoAxisFirst(out, axis);
}

std::vector<int64_t> BalancedSizes(int64_t n, int parts) {
  std::vector<int64_t> sizes;
  for (int i = 0; i < parts; ++i) sizes.push_back(ops::BalancedSplit(n, parts, i).size);
  return sizes;
}

namespace {

Tensor Zeros(const Shape& shape, DType dtype, const Device& device) {
  const std::vector<char> zeros(static_cast<size_t>(shape.numel()) * element_size(dtype), 0);
  return ofl::from_host(zeros.data(), shape, dtype, device);
}

// S(from) -> S(to), from != to: one all-to-all. Each rank sends the rows of its shard that the
// destination's slice of `to` covers (contiguous once `to` is outermost and `from` next), and
// reassembles what it receives with `from` outermost.
Tensor AllToAll(const Tensor& x, int from, int to, const Shape& logical, const Placement& p, int me,
                const std::string& sbps) {
  const int n = p.size();
  const int ndim = logical.ndim();
  std::vector<int64_t> send_perm = {to, from}, recv_perm = {from, to};
  int64_t rest = 1;
  for (int d = 0; d < ndim; ++d) {
    if (d == from || d == to) continue;
    send_perm.push_back(d);
    recv_perm.push_back(d);
    rest *= logical[d];
  }
  const Tensor y = ofl::contiguous(ofl::permute(x, send_perm));  // (L[to], a_me, rest)
  std::vector<int64_t> a = BalancedSizes(logical[from], n), b = BalancedSizes(logical[to], n);
  std::vector<int64_t> send_counts(n), send_displs(n), recv_counts(n), recv_displs(n);
  int64_t b_start = 0, recv_at = 0;
  for (int r = 0; r < n; ++r) {
    send_counts[r] = b[r] * a[me] * rest;
    send_displs[r] = b_start * a[me] * rest;
    b_start += b[r];
    recv_counts[r] = b[me] * a[r] * rest;
    recv_displs[r] = recv_at;
    recv_at += recv_counts[r];
  }
  std::vector<int64_t> out_dims = {logical[from], b[me]};
  for (int d = 0; d < ndim; ++d) {
    if (d != from && d != to) out_dims.push_back(logical[d]);
  }
  const Tensor out = NewTensor(Shape(out_dims), x.dtype(), HostDevice());  // (L[from], b_me, rest)
  const size_t es = element_size(x.dtype());
  IssueCollective(MakeFingerprint("boxing S->S (all-to-all)", x.dtype(), logical, sbps, p), p,
                  {y.impl()->arg()}, {out.impl()->arg()},
                  [=, dtype = x.dtype(), ranks = p.ranks(), c = &CollectivesOf(p),
                   device = PlacementDevice(p)](const auto& in, const auto& o, NativeStream s) {
                    std::vector<char> staged(static_cast<size_t>(recv_at) * es);
                    c->AllToAllV(in[0].data, send_counts, send_displs, staged.data(), recv_counts,
                                 recv_displs, dtype, ranks, device, s);
                    // The block from rank r is (b_me, a[r], rest); it lands at rows a_start.. of
                    // `from`.
                    char* dst = static_cast<char*>(o[0].data);
                    const size_t run = static_cast<size_t>(rest) * es;
                    int64_t a_start = 0;
                    for (int r = 0; r < n; ++r) {
                      const char* src = staged.data() + recv_displs[r] * es;
                      for (int64_t bi = 0; bi < b[me]; ++bi) {
                        for (int64_t ai = 0; ai < a[r]; ++ai) {
                          std::memcpy(dst + ((a_start + ai) * b[me] + bi) * run,
                                      src + (bi * a[r] + ai) * run, run);
                        }
                      }
                      a_start += a[r];
                    }
                  });
  return ofl::contiguous(ofl::permute(out, Inverse(recv_perm)));
}

}  // namespace

Tensor BoxShard(const Tensor& x, const Sbp& from, const Sbp& to, const Shape& logical,
                const Placement& p, int me) {
  const int n = p.size();
  if (from == to) return x;
  const std::string sbps = from.str() + " -> " + to.str();
  const Device device = PlacementDevice(p);
  const coll::DeviceCollectives& c = CollectivesOf(p);
  if (from.is_partial_sum()) c.CheckSum("to_global", x.dtype());
  if (!c.has_all_to_all() && from.is_split() && to.is_split()) {
    // No uneven all-to-all (NCCL has none): through broadcast (an all-gather and a local slice).
    const Tensor full = BoxShard(x, from, Sbp::broadcast(), logical, p, me);
    return BoxShard(full, Sbp::broadcast(), to, logical, p, me);
  }
  if (!c.host_accessible() && from.is_split() && to.is_partial_sum()) {
    // No communication: the host's own-slice fill, and back.
    const Tensor host =
        BoxShard(x.to(HostDevice()), from, to, logical, Placement("cpu", p.ranks()), me);
    return host.to(device);
  }
  if (from.is_split() && to.is_broadcast()) {
    return AllGatherAlong(x, from.axis(), BalancedSizes(logical[from.axis()], n), logical, p, me,
                          sbps);
  }
  if (from.is_partial_sum() && to.is_broadcast()) {
    const Tensor xc = ofl::contiguous(x);
    const Tensor out = NewTensor(logical, x.dtype(), device);
    IssueCollective(MakeFingerprint("boxing P->B (all-reduce)", x.dtype(), logical, sbps, p), p,
                    {xc.impl()->arg()}, {out.impl()->arg()},
                    [count = logical.numel(), device, dtype = x.dtype(), ranks = p.ranks(), c = &c](
                        const auto& in, const auto& o, NativeStream s) {
                      c->AllReduceSum(in[0].data, o[0].data, count, dtype, ranks, device, s);
                    });
    return out;
  }
  if (from.is_partial_sum() && to.is_split()) {
    const int axis = to.axis();
    const Tensor xc = AxisFirstContiguous(x, axis);
    const Shape shard = ops::PhysicalShape(logical, to, n, me);
    const Shape out_shape = Permuted(shard, AxisFirst(logical.ndim(), axis));
    const Tensor out = NewTensor(out_shape, x.dtype(), device);
    const int64_t inner = logical[axis] == 0 ? 0 : logical.numel() / logical[axis];
    std::vector<int64_t> counts;
    for (int64_t s : BalancedSizes(logical[axis], n)) counts.push_back(s * inner);
    IssueCollective(MakeFingerprint("boxing P->S (reduce-scatter)", x.dtype(), logical, sbps, p), p,
                    {xc.impl()->arg()}, {out.impl()->arg()},
                    [counts, device, dtype = x.dtype(), ranks = p.ranks(), c = &c](
                        const auto& in, const auto& o, NativeStream s) {
                      c->ReduceScatterSum(in[0].data, o[0].data, counts, dtype, ranks, device, s);
                    });
    return UndoAxisFirst(out, axis);
  }
  if (from.is_broadcast() && to.is_split()) {
    const ops::SplitRange r = ops::BalancedSplit(logical[to.axis()], n, me);
    return ofl::contiguous(ofl::narrow(x, to.axis(), r.start, r.size));
  }
  if (from.is_broadcast() && to.is_partial_sum()) {
    return me == 0 ? x : Zeros(logical, x.dtype(), device);
  }
  if (from.is_split() && to.is_partial_sum()) {
    // The own slice in a zero buffer: no communication.
    const int axis = from.axis();
    const Tensor xc = AxisFirstContiguous(x, axis);
    const Shape full = Permuted(logical, AxisFirst(logical.ndim(), axis));
    const Tensor out = NewTensor(full, x.dtype(), HostDevice());
    const int64_t inner = full[0] == 0 ? 0 : full.numel() / full[0];
    const size_t es = element_size(x.dtype());
    const size_t at =
        static_cast<size_t>(ops::BalancedSplit(logical[axis], n, me).start * inner) * es;
    const size_t total = static_cast<size_t>(full.numel()) * es;
    // xc is contiguous but may be a view into a larger storage (a narrow, a boxing's slice): copy
    // exactly its elements, from its offset, never the storage's whole block from its start.
    const size_t own = static_cast<size_t>(xc.numel()) * es;
    vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
      b->Function(
          "boxing S->P (own slice)", {xc.impl()->blob()}, {out.impl()->blob()},
          [src = xc.impl()->arg(), dst = out.impl()->arg(), at, total, own] {
            char* d = static_cast<char*>(dst.Resolve().data);
            if (total > 0) std::memset(d, 0, total);
            if (own > 0) std::memcpy(d + at, src.Resolve().data, own);
          },
          vm::VirtualMachine::Get().devices().GetStream(HostDevice()));
    });
    return UndoAxisFirst(out, axis);
  }
  // S(i) -> S(j), i != j.
  return AllToAll(x, from.axis(), to.axis(), logical, p, me, sbps);
}

// A placement change: the tensor is boxed to broadcast on its own placement, the first rank of
// that placement broadcasts it to the new placement's ranks, and they box it to `sbp` (a slice or
// a local zero fill: no more communication).
Tensor ChangePlacement(const Tensor& t, const Placement& to, const Sbp& sbp) {
  const GlobalMeta& g = *t.impl()->global();
  if (g.placement.device_type() != to.device_type()) {
    throw InvalidArgument("to_global: " + g.placement.str() + " -> " + to.str() +
                          ": a placement change keeps the device type; move the shards with "
                          "to_local().to(device) and to_global them again");
  }
  const int world_rank = coll::WorldRank();
  const int root = g.placement.ranks()[0];
  std::vector<int> group = {root};
  for (int r : to.ranks()) {
    if (r != root) group.push_back(r);
  }
  const bool in_dst = to.contains(world_rank);
  Tensor full;
  if (g.placement.contains(world_rank))
    full = ofl::contiguous(GlobalToBroadcastShard(t, "to_global"));
  if (world_rank != root && !in_dst)
    return GlobalOverShard(EmptyShard(t.dtype()), to, sbp, g.logical_shape);
  std::vector<vm::BlobArg> in, out;
  if (world_rank == root) in.push_back(full.impl()->arg());
  Tensor received;
  if (in_dst) {
    received = NewTensor(g.logical_shape, t.dtype(), PlacementDevice(to));
    out.push_back(received.impl()->arg());
  }
  const int64_t count = g.logical_shape.numel();
  IssueCollective(
      MakeFingerprint("placement change (broadcast from the first source rank)", t.dtype(),
                      g.logical_shape, g.placement.str() + " -> " + to.str(),
                      Placement(to.device_type(), group)),
      Placement(to.device_type(), group), std::move(in), std::move(out),
      [count, group, device = PlacementDevice(to), dtype = t.dtype(), is_root = world_rank == root,
       c = &CollectivesOf(to)](const auto& i, const auto& o, NativeStream s) {
        void* buf = o.empty() ? const_cast<void*>(static_cast<const void*>(i[0].data)) : o[0].data;
        c->Broadcast(buf, is_root ? i[0].data : nullptr, count, dtype, 0, group, device, s);
      });
  if (!in_dst) return GlobalOverShard(EmptyShard(t.dtype()), to, sbp, g.logical_shape);
  const Tensor shard =
      BoxShard(received, Sbp::broadcast(), sbp, g.logical_shape, to, to.index_of(world_rank));
  return GlobalOverShard(shard, to, sbp, g.logical_shape);
}

}  // namespace ofl::functional
