// Global tensors: init_distributed, to_global / to_local, global empty, and the checks every rank
// makes of a placement. The collective protocol is global_protocol.h's, boxing boxing.h's, the
// agreement of to_global's call across ranks global_exchange.h's.
#include <string>
#include <vector>

#include "kernels/collective/collectives.h"
#include "oneflow_lite/autograd.h"
#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/distributed.h"
#include "oneflow_lite/functional/boxing.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_exchange.h"
#include "oneflow_lite/functional/global_protocol.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/random.h"
#include "ops/array_ops.h"
#include "ops/sbp_rules.h"
#include "vm/process_group_hooks.h"

namespace ofl {

namespace coll = kernels::collective;

void init_distributed() { coll::InitProcessGroup(); }

namespace {
// The VM's view of the process group (vm/process_group_hooks.h), set while the library loads.
const bool process_group_hooks_set = [] {
  vm::SetProcessGroupHooks({&coll::WorldRank, &coll::WorldSize, &coll::FinalizeProcessGroup});
  return true;
}();
}  // namespace
int rank() { return coll::WorldRank(); }
int world_size() { return coll::WorldSize(); }
void abort_job(const std::string& why) { coll::AbortJob(why); }

namespace functional {
namespace {

void CheckPlacement(const char* op, const Placement& p) {
  CheckedCollectivesOf(op, p);
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
      call.records_grad = autograd::RequiresGrad(impl) && autograd::GradModeEnabled();
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
  if (me < 0) {
    const Tensor out = GlobalOverShard(EmptyShard(agreed.dtype), p, sbp, logical);
    // The members' tensors require grad: this rank's output does too, so that every rank runs
    // the same backward (its own input, outside, gets no gradient).
    if (agreed.records_grad) RecordToGlobal(EmptyShard(agreed.dtype), out);
    return out;
  }
  if (agreed.records_grad) {
    // Balanced shards (the agreement refused others): the output is over the tensor as given.
    const Tensor out = GlobalOverShard(local, p, sbp, logical);
    RecordToGlobal(local, out);
    return out;
  }
  Tensor shard = local;
  if (sbp.is_split() && agreed.split_sizes != BalancedSizes(logical[sbp.axis()], p.size())) {
    // Uneven shards as given: gather them and keep the balanced slice.
    const Tensor full = AllGatherAlong(local, sbp.axis(), agreed.split_sizes, logical, p, me,
                                       "uneven " + sbp.str() + " -> B");
    const ops::SplitRange r = ops::BalancedSplit(logical[sbp.axis()], p.size(), me);
    shard = ofl::contiguous(ofl::narrow(full, sbp.axis(), r.start, r.size));
  }
  return GlobalOverShard(shard, p, sbp, logical);
}

}  // namespace

Tensor GlobalOverShard(const Tensor& shard, const Placement& p, const Sbp& s,
                       const Shape& logical) {
  const TensorImpl& impl = *shard.impl();
  auto out =
      std::make_shared<TensorImpl>(impl.shape(), impl.stride(), impl.offset(), impl.storage());
  out->set_global(std::make_shared<GlobalMeta>(GlobalMeta{p, s, logical}));
  return Tensor(std::move(out));
}

Tensor EmptyShard(DType dtype) {
  return ofl::empty(Shape({0}), dtype, Device(DeviceType::kCPU, 0));
}

Tensor GlobalFull(const char* op, const Shape& logical, const Scalar& value, DType dtype,
                  const Placement& p, const Sbp& sbp) {
  const int me = p.index_of(coll::WorldRank());
  if (me < 0) return GlobalOverShard(EmptyShard(dtype), p, sbp, logical);
  const Scalar mine = sbp.is_partial_sum() && me != 0 ? Scalar(int64_t{0}) : value;
  const Tensor shard =
      Full(op, ops::PhysicalShape(logical, sbp, p.size(), me), mine, dtype, PlacementDevice(p));
  return GlobalOverShard(shard, p, sbp, logical);
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

}  // namespace functional

namespace {
// Boxing of a global tensor (Tensor::to_global without its recording).
Tensor Box(const Tensor& t, const Placement& placement, const Sbp& sbp) {
  const TensorImpl& impl = *t.impl();
  const Shape& shape = t.shape();
  functional::CheckSbp("to_global", sbp, shape);
  const GlobalMeta& g = *impl.global();
  functional::CheckPlacement("to_global", placement);
  if (placement != g.placement) return functional::ChangePlacement(t, placement, sbp);
  const int me = placement.index_of(coll::WorldRank());
  if (me < 0)
    return functional::GlobalOverShard(functional::EmptyShard(impl.dtype()), placement, sbp, shape);
  const Tensor shard =
      functional::BoxShard(functional::ShardOf(t), g.sbp, sbp, g.logical_shape, placement, me);
  return functional::GlobalOverShard(shard, placement, sbp, g.logical_shape);
}
}  // namespace

Tensor Tensor::to_global(const Placement& placement, const Sbp& sbp) const {
  // A local (or undefined) tensor: every check is agreed between the ranks (and whether autograd
  // records the conversion).
  if (!defined() || !impl()->global()) return functional::LocalToGlobal(*this, placement, sbp);
  if (!autograd::ShouldRecord(*this)) return Box(*this, placement, sbp);
  Tensor out;
  {
    NoGradGuard inner;
    out = Box(*this, placement, sbp);
  }
  functional::RecordToGlobal(*this, out);
  return out;
}

Tensor Tensor::to_local() const {
  Tensor shard = functional::ShardOf(*this);
  if (shard.impl() != impl() && autograd::ShouldRecord(*this)) {
    functional::RecordToLocal(*this, shard);
  }
  return shard;
}

Tensor empty(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp) {
  ops::CheckShape("empty", "shape", logical, element_size(dtype));
  functional::CheckPlacement("empty", placement);
  functional::CheckSbp("empty", sbp, logical);
  const int me = placement.index_of(coll::WorldRank());
  const Tensor shard = me < 0 ? functional::EmptyShard(dtype)
                              : ofl::empty(ops::PhysicalShape(logical, sbp, placement.size(), me),
                                           dtype, functional::PlacementDevice(placement));
  return functional::GlobalOverShard(shard, placement, sbp, logical);
}

namespace {
void CheckGlobalCreation(const char* op, const Shape& logical, DType dtype, const Placement& p,
                         const Sbp& sbp) {
  ops::CheckDType(op, dtype);
  ops::CheckShape(op, "shape", logical, element_size(dtype));
  functional::CheckPlacement(op, p);
  functional::CheckSbp(op, sbp, logical);
}

Tensor GlobalRandom(const char* op, const Shape& logical, DType dtype, const Placement& p,
                    const Sbp& sbp, bool normal) {
  CheckGlobalCreation(op, logical, dtype, p, sbp);
  if (!is_floating_point(dtype)) {
    throw InvalidArgument(std::string(op) + ": dtype " + to_string(dtype) +
                          " is not supported (a float dtype is)");
  }
  if (sbp.is_partial_sum()) {
    throw InvalidArgument(std::string(op) +
                          ": sbp P (partial_sum) is not supported for random numbers (their sum "
                          "over the ranks has no shards to draw); draw broadcast or split");
  }
  const Tensor like = empty(logical, dtype, p, sbp);
  return normal ? randn_like(like) : rand_like(like);
}
}  // namespace

Tensor full(const Shape& logical, Scalar value, DType dtype, const Placement& placement,
            const Sbp& sbp) {
  CheckGlobalCreation("full", logical, dtype, placement, sbp);
  return functional::GlobalFull("full", logical, value, dtype, placement, sbp);
}
Tensor zeros(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp) {
  CheckGlobalCreation("zeros", logical, dtype, placement, sbp);
  return functional::GlobalFull("zeros", logical, 0, dtype, placement, sbp);
}
Tensor ones(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp) {
  CheckGlobalCreation("ones", logical, dtype, placement, sbp);
  return functional::GlobalFull("ones", logical, 1, dtype, placement, sbp);
}
Tensor rand(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp) {
  return GlobalRandom("rand", logical, dtype, placement, sbp, /*normal=*/false);
}
Tensor randn(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp) {
  return GlobalRandom("randn", logical, dtype, placement, sbp, /*normal=*/true);
}

}  // namespace ofl
