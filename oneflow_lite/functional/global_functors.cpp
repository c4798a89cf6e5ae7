// Global tensors: init_distributed, to_global / to_local, global empty, and boxing (SBP
// conversions). Boxing is built from local ops (permute, contiguous, narrow) and collectives issued
// as VM instructions on the collective stream (vm/collective_policy.h), which runs them in issue
// order; the SBP arithmetic is in ops/sbp_rules.h. cpu placements move host memory with MPI; cuda
// placements move device memory with NCCL on the GPU's collective stream (each rank uses the GPU
// of its node-local rank), and their metadata (the shape exchange) still goes over MPI.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/collective/collectives.h"
#include "kernels/collective/nccl_collectives.h"
#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/distributed.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_exchange.h"
#include "oneflow_lite/functional/global_util.h"
#include "ops/array_ops.h"
#include "ops/sbp_rules.h"
#include "vm/collective_policy.h"
#include "vm/virtual_machine.h"

namespace ofl {

namespace coll = kernels::collective;

void init_distributed() { coll::InitProcessGroup(); }
int rank() { return coll::WorldRank(); }
int world_size() { return coll::WorldSize(); }

namespace functional {
namespace {

const Device& Host() {
  static const Device host(DeviceType::kCPU, 0);
  return host;
}

bool OnCuda(const Placement& p) { return p.device_type() == "cuda"; }

// The device this rank's shards of `p` live on: cpu:0, or for a cuda placement the GPU of this
// rank's node-local index (OMPI_COMM_WORLD_LOCAL_RANK; the world rank without it) modulo the GPUs
// present.
Device PlacementDevice(const Placement& p) {
  if (!OnCuda(p)) return Host();
  static const int index = [] {
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    const int r = local != nullptr ? std::atoi(local) : coll::WorldRank();
    const int n = device_count(DeviceType::kCUDA);
    return n > 0 ? r % n : 0;
  }();
  return Device(DeviceType::kCUDA, index);
}

void CheckPlacement(const char* op, const Placement& p) {
  if (OnCuda(p)) {
    if (!coll::BuiltWithNccl()) {
      throw InvalidArgument(std::string(op) + ": " + p.str() +
                            ": cuda placements need NCCL, and this oneflow_lite was built without "
                            "it (CUDA, MPI and NCCL at build time)");
    }
    if (device_count(DeviceType::kCUDA) == 0) {
      throw DeviceError(std::string(op) + ": " + p.str() + ": " +
                        device_unavailable_reason(DeviceType::kCUDA));
    }
  } else if (p.device_type() != "cpu") {
    throw InvalidArgument(std::string(op) + ": " + p.str() + ": device type '" + p.device_type() +
                          "' is not supported for global tensors (cpu placements move host "
                          "memory with MPI, cuda placements device memory with NCCL)");
  }
  const int world = coll::WorldSize();
  for (int r : p.ranks()) {
    if (r >= world) {
      throw InvalidArgument(
          std::string(op) + ": " + p.str() + " names rank " + std::to_string(r) +
          ", outside the world of " + std::to_string(world) + " process(es)" +
          (world == 1 ? " (launch with mpiexec and call ofl::init_distributed())" : ""));
    }
  }
}

void CheckSbp(const char* op, const Sbp& sbp, const Shape& logical) {
  if (sbp.is_split() && sbp.axis() >= logical.ndim()) {
    throw InvalidArgument(std::string(op) + ": sbp " + sbp.str() + " splits axis " +
                          std::to_string(sbp.axis()) + " but the logical shape " + logical.str() +
                          " has " + std::to_string(logical.ndim()) + " dim(s)");
  }
}

// The collective stream of the placement's device on this rank (the host's for metadata).
vm::Stream* CollectiveStream(const Device& device = Host()) {
  return vm::VirtualMachine::Get().GetStream(device, vm::StreamRole::kCollective);
}

// The fingerprint every rank's collective number `seq` must share: kind, element type, logical
// shape, SBPs and placement.
struct Fingerprint {
  std::string text;
};

Fingerprint MakeFingerprint(const char* kind, DType dtype, const Shape& logical,
                            const std::string& sbps, const Placement& p) {
  return {std::string(kind) + ", " + to_string(dtype) + ", logical " + logical.str() + ", " + sbps +
          ", " + p.str()};
}

// OFL_CHECK_COLLECTIVES, the same on every rank once init_distributed ran (see
// coll::CollectiveChecksEnabled): the check is an exchange of its own, which a rank without it
// would pair with its next collective.
bool CheckCollectives() { return coll::CollectiveChecksEnabled(); }

// The number of the next collective over `ranks`. Counted per rank list: every member of a list
// issues the same collectives over it in the same order, while ranks outside it issue none.
int64_t NextSeq(const std::vector<int>& ranks) {
  static std::mutex mu;
  static std::map<std::vector<int>, int64_t> next;
  std::lock_guard<std::mutex> lock(mu);
  return next[ranks]++;
}

// With OFL_CHECK_COLLECTIVES=1, run by the collective stream before each collective: the ranks
// exchange their sequence numbers and fingerprints and, when any differs from the first rank's,
// all of them throw the same error naming both sides (so they skip the collective together and
// stay in step for the next one).
void CheckInStep(int64_t seq, const std::string& fingerprint, const std::vector<int>& ranks,
                 int channel) {
  constexpr size_t kText = 256;
  constexpr size_t kSlot = kText + sizeof(int64_t);
  std::vector<char> mine(kSlot, 0), all(kSlot * ranks.size(), 0);
  std::memcpy(mine.data(), &seq, sizeof(seq));
  std::memcpy(mine.data() + sizeof(seq), fingerprint.data(),
              std::min(kText - 1, fingerprint.size()));
  coll::AllGatherV(mine.data(), kSlot, all.data(),
                   std::vector<int64_t>(ranks.size(), static_cast<int64_t>(kSlot)), DType::kUInt8,
                   ranks, channel);
  auto seq_of = [&](size_t i) {
    int64_t v = 0;
    std::memcpy(&v, all.data() + i * kSlot, sizeof(v));
    return v;
  };
  auto text_of = [&](size_t i) { return std::string(all.data() + i * kSlot + sizeof(int64_t)); };
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (seq_of(i) != seq_of(0) || text_of(i) != text_of(0)) {
      throw Error("collectives out of step (OFL_CHECK_COLLECTIVES): rank " +
                  std::to_string(ranks[0]) + " issued collective #" + std::to_string(seq_of(0)) +
                  " (" + text_of(0) + ") but rank " + std::to_string(ranks[i]) +
                  " issued collective #" + std::to_string(seq_of(i)) + " (" + text_of(i) +
                  "); every rank must issue the same global ops in the same order");
    }
  }
}

// The instruction's op name: the kind, the sequence number and the rank list, which together name
// the same collective on every rank (the trace tool pairs the ranks' records by them).
std::string CollectiveName(const std::string& kind, int64_t seq, const std::vector<int>& ranks) {
  std::string s = kind + " #" + std::to_string(seq) + " over [";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

void IssueCollective(const Fingerprint& fp, const Placement& p, std::vector<vm::BlobArg> in,
                     std::vector<vm::BlobArg> out, vm::CollectivePolicy::Run run) {
  const int64_t seq = NextSeq(p.ranks());
  if (CheckCollectives()) {
    // On the channel of the stream that runs it: a GPU's collective worker must not make MPI calls
    // on the CPU collective stream's communicators, whose worker may use them at the same time.
    run = [seq, text = fp.text, ranks = p.ranks(),
           channel = coll::CollectiveChannel(PlacementDevice(p)),
           run = std::move(run)](const auto& i, const auto& o, NativeStream s) {
      CheckInStep(seq, text, ranks, channel);
      run(i, o, s);
    };
  }
  const std::string op = CollectiveName(fp.text.substr(0, fp.text.find(',')), seq, p.ranks());
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->Policy(
        CollectiveStream(PlacementDevice(p)),
        std::make_unique<vm::CollectivePolicy>(op, coll::CollectiveId{seq, p.ranks(), fp.text},
                                               std::move(in), std::move(out), std::move(run)));
  });
}

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

// S(axis) -> B with the given per-rank sizes along axis (balanced or not).
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
                  [counts, me, device, dtype = x.dtype(), ranks = p.ranks()](
                      const auto& in, const auto& o, NativeStream s) {
                    if (device.is_cuda()) {
                      coll::NcclAllGatherV(in[0].data, counts[me], o[0].data, counts, dtype, ranks,
                                           device.index(), s);
                    } else {
                      coll::AllGatherV(in[0].data, counts[me], o[0].data, counts, dtype, ranks);
                    }
                  });
  return UndoAxisFirst(out, axis);
}

std::vector<int64_t> BalancedSizes(int64_t n, int parts) {
  std::vector<int64_t> sizes;
  for (int i = 0; i < parts; ++i) sizes.push_back(ops::BalancedSplit(n, parts, i).size);
  return sizes;
}

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
  const Tensor out = NewTensor(Shape(out_dims), x.dtype(), Host());  // (L[from], b_me, rest)
  const size_t es = element_size(x.dtype());
  IssueCollective(
      MakeFingerprint("boxing S->S (all-to-all)", x.dtype(), logical, sbps, p), p,
      {y.impl()->arg()}, {out.impl()->arg()},
      [=, dtype = x.dtype(), ranks = p.ranks()](const auto& in, const auto& o, NativeStream) {
        std::vector<char> staged(static_cast<size_t>(recv_at) * es);
        coll::AllToAllV(in[0].data, send_counts, send_displs, staged.data(), recv_counts,
                        recv_displs, dtype, ranks);
        // The block from rank r is (b_me, a[r], rest); it lands at rows a_start.. of
        // `from`.
        char* dst = static_cast<char*>(o[0].data);
        const size_t run = static_cast<size_t>(rest) * es;
        int64_t a_start = 0;
        for (int r = 0; r < n; ++r) {
          const char* src = staged.data() + recv_displs[r] * es;
          for (int64_t bi = 0; bi < b[me]; ++bi) {
            for (int64_t ai = 0; ai < a[r]; ++ai) {
              std::memcpy(dst + ((a_start + ai) * b[me] + bi) * run, src + (bi * a[r] + ai) * run,
                          run);
            }
          }
          a_start += a[r];
        }
      });
  return ofl::contiguous(ofl::permute(out, Inverse(recv_perm)));
}

// This rank's new shard for `to`, from its shard `x` under `from` (same placement; me >= 0).
Tensor BoxShard(const Tensor& x, const Sbp& from, const Sbp& to, const Shape& logical,
                const Placement& p, int me) {
  const int n = p.size();
  if (from == to) return x;
  const std::string sbps = from.str() + " -> " + to.str();
  const Device device = PlacementDevice(p);
  if (OnCuda(p) && from.is_partial_sum()) coll::NcclCheckSum("to_global", x.dtype());
  if (OnCuda(p) && from.is_split() && to.is_split()) {
    // NCCL has no uneven all-to-all: through broadcast (an all-gather and a local slice).
    const Tensor full = BoxShard(x, from, Sbp::broadcast(), logical, p, me);
    return BoxShard(full, Sbp::broadcast(), to, logical, p, me);
  }
  if (OnCuda(p) && from.is_split() && to.is_partial_sum()) {
    // No communication: the host's own-slice fill, and back.
    const Tensor host = BoxShard(x.to(Host()), from, to, logical, Placement("cpu", p.ranks()), me);
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
                    [count = logical.numel(), device, dtype = x.dtype(), ranks = p.ranks()](
                        const auto& in, const auto& o, NativeStream s) {
                      if (device.is_cuda()) {
                        coll::NcclAllReduceSum(in[0].data, o[0].data, count, dtype, ranks,
                                               device.index(), s);
                      } else {
                        coll::AllReduceSum(in[0].data, o[0].data, count, dtype, ranks);
                      }
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
                    [counts, device, dtype = x.dtype(), ranks = p.ranks()](
                        const auto& in, const auto& o, NativeStream s) {
                      if (device.is_cuda()) {
                        coll::NcclReduceScatterSum(in[0].data, o[0].data, counts, dtype, ranks,
                                                   device.index(), s);
                      } else {
                        coll::ReduceScatterSum(in[0].data, o[0].data, counts, dtype, ranks);
                      }
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
    const Tensor out = NewTensor(full, x.dtype(), Host());
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
          vm::VirtualMachine::Get().GetStream(Host()));
    });
    return UndoAxisFirst(out, axis);
  }
  // S(i) -> S(j), i != j.
  return AllToAll(x, from.axis(), to.axis(), logical, p, me, sbps);
}

// Every rank's `mine` (the same size on every rank), gathered over the world in rank order: the
// metadata exchange before to_global of local tensors moves any data.
std::vector<char> GatherSlots(const char* op, std::vector<char> mine) {
  const int world = coll::WorldSize();
  const int64_t slot = static_cast<int64_t>(mine.size());
  auto all = std::make_shared<std::vector<char>>(static_cast<size_t>(world * slot), 0);
  std::vector<int> ranks(world);
  std::iota(ranks.begin(), ranks.end(), 0);
  const int64_t seq = NextSeq(ranks);
  vm::InstrRef ref;
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    ref = b->Policy(
        CollectiveStream(),
        std::make_unique<vm::CollectivePolicy>(
            CollectiveName(std::string(op) + ": shape exchange", seq, ranks),
            coll::CollectiveId{seq, ranks, std::string(op) + " shape exchange"},
            std::vector<vm::BlobArg>{}, std::vector<vm::BlobArg>{},
            [all, mine = std::move(mine), ranks, slot, seq,
             text = std::string(op) + " shape exchange"](const auto&, const auto&, NativeStream) {
              if (CheckCollectives()) CheckInStep(seq, text, ranks, /*channel=*/0);
              coll::AllGatherV(mine.data(), slot, all->data(),
                               std::vector<int64_t>(ranks.size(), slot), DType::kUInt8, ranks);
            }));
  });
  auto& vm = vm::VirtualMachine::Get();
  vm.Wait(ref.get(), op);
  vm.ThrowIfFailed(ref.get());
  return *all;
}

// to_global of local tensors. This rank's own checks do not throw here: their verdict travels in
// the exchange with the call's facts, and every rank throws the same error (global_exchange.h).
Tensor LocalToGlobal(const Tensor& local, const Placement& p, const Sbp& sbp) {
  const int world = coll::WorldSize();
  ToGlobalCall call;
  call.member = p.contains(coll::WorldRank());
  call.has_tensor = local.defined();
  call.placement = p.str();
  call.sbp = sbp.str();
  if (call.has_tensor) {
    call.shape = local.impl()->shape();
    call.dtype = local.impl()->dtype();
  }
  auto fail = [&](ToGlobalCall::Failure kind, const char* what) {
    call.failure = kind;
    call.failure_message = what;
  };
  try {
    CheckPlacement("to_global", p);
    if (call.member) {
      const TensorImpl& impl = LocalImplOf("to_global", local);
      if (autograd::RequiresGrad(impl) && autograd::GradModeEnabled()) {
        throw InvalidArgument(
            "to_global: autograd of global tensors is not supported yet, and the local tensor "
            "requires grad; pass detach() (or convert under NoGradGuard)");
      }
      if (impl.device() != PlacementDevice(p)) {
        throw InvalidArgument("to_global: the local tensor is on " + impl.device().str() +
                              ", but " + p.str() + " needs this rank's tensors on " +
                              PlacementDevice(p).str());
      }
      if (sbp.is_split() && sbp.axis() >= impl.shape().ndim()) {
        throw InvalidArgument("to_global: sbp " + sbp.str() + " splits axis " +
                              std::to_string(sbp.axis()) + " but the local tensor has shape " +
                              impl.shape().str() + " (" + std::to_string(impl.shape().ndim()) +
                              " dim(s))");
      }
    }
  } catch (const InvalidArgument& e) {
    fail(ToGlobalCall::Failure::kInvalidArgument, e.what());
  } catch (const DeviceError& e) {
    fail(ToGlobalCall::Failure::kDeviceError, e.what());
  } catch (const Error& e) {
    fail(ToGlobalCall::Failure::kError, e.what());
  }
  const ToGlobalAgreement agreed =
      AgreeOnToGlobal(GatherSlots("to_global", EncodeToGlobalCall(call, world)), world, p, sbp);
  const Shape& logical = agreed.logical;
  const int me = p.index_of(coll::WorldRank());
  if (me < 0) return Wrap(EmptyShard(agreed.dtype), p, sbp, logical);
  Tensor shard = local;
  if (sbp.is_split() && agreed.split_sizes != BalancedSizes(logical[sbp.axis()], p.size())) {
    // Uneven shards as given: gather them and keep the balanced slice.
    const Tensor full = AllGatherAlong(local, sbp.axis(), agreed.split_sizes, logical, p, me,
                                       "uneven " + sbp.str() + " -> B");
    const ops::SplitRange r = ops::BalancedSplit(logical[sbp.axis()], p.size(), me);
    shard = ofl::contiguous(ofl::narrow(full, sbp.axis(), r.start, r.size));
  }
  return Wrap(shard, p, sbp, logical);
}

}  // namespace

Tensor Wrap(const Tensor& shard, const Placement& p, const Sbp& s, const Shape& logical) {
  const TensorImpl& impl = *shard.impl();
  auto out =
      std::make_shared<TensorImpl>(impl.shape(), impl.stride(), impl.offset(), impl.storage());
  out->set_global(std::make_shared<GlobalMeta>(GlobalMeta{p, s, logical}));
  return Tensor(std::move(out));
}

Tensor EmptyShard(DType dtype) {
  return ofl::empty(Shape({0}), dtype, Device(DeviceType::kCPU, 0));
}

Tensor ShardOf(const Tensor& t) {
  const TensorImpl& impl = LocalImplOf("to_local", t);
  if (!impl.global()) return t;
  return Tensor(
      std::make_shared<TensorImpl>(impl.shape(), impl.stride(), impl.offset(), impl.storage()));
}

Tensor GlobalToBroadcastShard(const Tensor& t, const char* op) {
  const GlobalMeta& g = *LocalImplOf(op, t).global();
  const int me = g.placement.index_of(coll::WorldRank());
  if (me < 0) {
    throw InvalidArgument(std::string(op) + ": rank " + std::to_string(coll::WorldRank()) +
                          " is outside the tensor's " + g.placement.str() + " and holds no data");
  }
  return BoxShard(ShardOf(t), g.sbp, Sbp::broadcast(), g.logical_shape, g.placement, me);
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
  if (world_rank != root && !in_dst) return Wrap(EmptyShard(t.dtype()), to, sbp, g.logical_shape);
  std::vector<vm::BlobArg> in, out;
  if (world_rank == root) in.push_back(full.impl()->arg());
  Tensor received;
  if (in_dst) {
    received = NewTensor(g.logical_shape, t.dtype(), PlacementDevice(to));
    out.push_back(received.impl()->arg());
  }
  const int64_t count = g.logical_shape.numel();
  const size_t bytes = static_cast<size_t>(count) * element_size(t.dtype());
  IssueCollective(MakeFingerprint("placement change (broadcast from the first source rank)",
                                  t.dtype(), g.logical_shape, g.placement.str() + " -> " + to.str(),
                                  Placement(to.device_type(), group)),
                  Placement(to.device_type(), group), std::move(in), std::move(out),
                  [count, bytes, group, device = PlacementDevice(to), dtype = t.dtype(),
                   is_root = world_rank == root](const auto& i, const auto& o, NativeStream s) {
                    void* buf = o.empty() ? const_cast<void*>(static_cast<const void*>(i[0].data))
                                          : o[0].data;
                    if (device.is_cuda()) {
                      coll::NcclBroadcast(buf, is_root ? i[0].data : nullptr, count, dtype, 0,
                                          group, device.index(), s);
                      return;
                    }
                    if (is_root && !o.empty() && bytes > 0)
                      std::memcpy(o[0].data, i[0].data, bytes);
                    coll::Broadcast(buf, count, dtype, 0, group);
                  });
  if (!in_dst) return Wrap(EmptyShard(t.dtype()), to, sbp, g.logical_shape);
  const Tensor shard =
      BoxShard(received, Sbp::broadcast(), sbp, g.logical_shape, to, to.index_of(world_rank));
  return Wrap(shard, to, sbp, g.logical_shape);
}

}  // namespace functional

Tensor Tensor::to_global(const Placement& placement, const Sbp& sbp) const {
  // A local (or undefined) tensor: every check is agreed between the ranks.
  if (!defined() || !impl()->global()) return functional::LocalToGlobal(*this, placement, sbp);
  const TensorImpl& impl = *this->impl();
  functional::CheckSbp("to_global", sbp, shape());
  const GlobalMeta& g = *impl.global();
  functional::CheckPlacement("to_global", placement);
  if (placement != g.placement) return functional::ChangePlacement(*this, placement, sbp);
  const int me = placement.index_of(coll::WorldRank());
  if (me < 0)
    return functional::Wrap(functional::EmptyShard(impl.dtype()), placement, sbp, shape());
  const Tensor shard =
      functional::BoxShard(functional::ShardOf(*this), g.sbp, sbp, g.logical_shape, placement, me);
  return functional::Wrap(shard, placement, sbp, g.logical_shape);
}

Tensor Tensor::to_local() const { return functional::ShardOf(*this); }

Tensor empty(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp) {
  ops::CheckShape("empty", "shape", logical, element_size(dtype));
  functional::CheckPlacement("empty", placement);
  functional::CheckSbp("empty", sbp, logical);
  const int me = placement.index_of(coll::WorldRank());
  const Tensor shard = me < 0 ? functional::EmptyShard(dtype)
                              : ofl::empty(ops::PhysicalShape(logical, sbp, placement.size(), me),
                                           dtype, functional::PlacementDevice(placement));
  return functional::Wrap(shard, placement, sbp, logical);
}

}  // namespace ofl
