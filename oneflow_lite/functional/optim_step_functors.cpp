// The multi-tensor optimizer steps of oneflow_lite/functional/optim_step.h: the tensors the
// kernels can take, grouped by device and dtype, each group one instruction.
#include "oneflow_lite/functional/optim_step.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "kernels/kernel.h"
#include "kernels/optim_step.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/tensor_impl.h"
#include "vm/instructions_builder.h"

namespace ofl::functional {

namespace {

bool StepDType(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 ||
         d == DType::kFloat64;
}

// Whether `t` can be an operand beside parameter p: local, contiguous, p's shape, dtype, device.
bool Fits(const Tensor& t, const Tensor& p) {
  if (!t.defined() || t.is_global()) return false;
  const TensorImpl& a = *t.impl();
  const TensorImpl& b = *p.impl();
  return a.shape() == b.shape() && a.dtype() == b.dtype() && a.device() == b.device() &&
         t.is_contiguous();
}

// One instruction's operands: its gradients (inputs) and written tensors (outputs, per_tensor
// for each gradient).
struct Group {
  Device device{DeviceType::kCPU, 0};
  DType dtype = DType::kFloat32;
  kernels::KernelFn fn = nullptr;
  std::vector<size_t> index;
  std::vector<Tensor> grads;    // contiguous
  std::vector<Tensor> written;  // per tensor: the parameter, then its states
};

// Sorts the parameters into groups by (device, dtype); `states(i)` lists tensor i's written
// states. Returns the indices that fit no group.
template <class States>
std::vector<size_t> Sort(const char* kernel, const std::vector<Tensor>& params,
                         const std::vector<Tensor>& grads, const States& states,
                         std::vector<Group>* groups) {
  std::vector<size_t> left;
  std::set<const void*> written;  // the storages some operand writes
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    bool ok = p.defined() && !p.is_global() && p.is_contiguous() && StepDType(p.dtype()) &&
              grads[i].defined() && !grads[i].is_global();
    if (ok) {
      const TensorImpl& g = *grads[i].impl();
      ok = g.shape() == p.impl()->shape() && g.dtype() == p.dtype() && g.device() == p.device();
    }
    std::vector<Tensor> own;
    if (ok) {
      own = states(i);
      for (const Tensor& s : own) ok = ok && Fits(s, p);
    }
    if (ok) {
      // Every written storage once: two parameters viewing one storage take the per-op path.
      std::set<const void*> mine{p.impl()->storage().blob().get()};
      for (const Tensor& s : own) mine.insert(s.impl()->storage().blob().get());
      ok = mine.size() == own.size() + 1;
      for (const void* s : mine) ok = ok && written.count(s) == 0;
      if (ok) written.insert(mine.begin(), mine.end());
    }
    auto at = std::find_if(groups->begin(), groups->end(), [&](const Group& g) {
      return g.device == p.device() && g.dtype == p.dtype();
    });
    if (ok && at == groups->end()) {
      // The kernel is looked up once per group (the registry takes a lock).
      kernels::KernelFn fn = kernels::TryFindKernel(kernel, p.device().type());
      if (fn != nullptr) {
        at = groups->insert(groups->end(), Group{});
        at->device = p.device();
        at->dtype = p.dtype();
        at->fn = fn;
      }
    }
    if (!ok || at == groups->end()) {
      left.push_back(i);
      continue;
    }
    Group& group = *at;
    group.index.push_back(i);
    group.written.push_back(p);
    for (Tensor& s : own) group.written.push_back(std::move(s));
  }
  // A gradient the call also writes (a gradient viewing a parameter's storage) would be read
  // while it is written: those tensors take the per-op path too.
  for (Group& group : *groups) {
    for (size_t k = 0; k < group.index.size(); ++k) {
      const Tensor& g = grads[group.index[k]];
      group.grads.push_back(g.is_contiguous() ? g : g.contiguous());
    }
  }
  for (auto it = groups->begin(); it != groups->end();) {
    Group& group = *it;
    const size_t per = group.written.size() / group.index.size();
    Group kept;
    kept.device = group.device;
    kept.dtype = group.dtype;
    kept.fn = group.fn;
    for (size_t k = 0; k < group.index.size(); ++k) {
      if (written.count(group.grads[k].impl()->storage().blob().get()) != 0) {
        left.push_back(group.index[k]);
        continue;
      }
      kept.index.push_back(group.index[k]);
      kept.grads.push_back(group.grads[k]);
      for (size_t j = 0; j < per; ++j) kept.written.push_back(group.written[k * per + j]);
    }
    if (kept.index.empty()) {
      it = groups->erase(it);
    } else {
      *it = std::move(kept);
      ++it;
    }
  }
  std::sort(left.begin(), left.end());
  return left;
}

void Issue(const char* kernel, const Group& group, const Attrs& attrs) {
  std::vector<vm::BlobArg> in, out;
  in.reserve(group.grads.size());
  out.reserve(group.written.size());
  for (const Tensor& g : group.grads) in.push_back(g.impl()->arg());
  for (const Tensor& w : group.written) out.push_back(w.impl()->arg());
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall(kernel, group.fn, std::move(in), std::move(out), attrs);
  });
  for (const Tensor& w : group.written) w.impl()->storage()->BumpVersion();
}

// A global parameter steps shard by shard (the step is elementwise) when its gradient and states
// are global over its placement and it is split or broadcast: its operands become this rank's
// shards (sharing their storages), a gradient of another SBP boxed to the parameter's first (the
// same collective on every rank: the SBPs are the program's). Others stay global, for the per-op
// path. `states` are the per-parameter state lists (empty when unused).
void ToShards(std::vector<Tensor>* params, std::vector<Tensor>* grads,
              std::initializer_list<std::vector<Tensor>*> states) {
  for (size_t i = 0; i < params->size(); ++i) {
    const Tensor& p = (*params)[i];
    if (!p.defined() || !p.is_global() || p.sbp().is_partial_sum()) continue;
    const Placement placement = p.placement();
    const Sbp sbp = p.sbp();
    auto same = [&](const Tensor& t) {
      return t.defined() && t.is_global() && t.placement() == placement && t.sbp() == sbp;
    };
    Tensor& g = (*grads)[i];
    bool ok = g.defined() && g.is_global() && g.placement() == placement;
    for (std::vector<Tensor>* s : states) ok = ok && (s->empty() || same((*s)[i]));
    if (!ok) continue;
    if (g.sbp() != sbp) g = g.to_global(placement, sbp);
    (*params)[i] = ShardOf(p);
    g = ShardOf(g);
    for (std::vector<Tensor>* s : states) {
      if (!s->empty()) (*s)[i] = ShardOf((*s)[i]);
    }
  }
}

void NeedSizes(const char* fn, size_t n, std::initializer_list<std::pair<const char*, size_t>> l) {
  for (const auto& entry : l) {
    if (entry.second != n) {
      throw InvalidArgument(std::string(fn) + ": " + entry.first + " has " +
                            std::to_string(entry.second) + " entries for " + std::to_string(n) +
                            " parameters");
    }
  }
}

}  // namespace

std::vector<size_t> AdamStep(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                             const std::vector<Tensor>& exp_avgs,
                             const std::vector<Tensor>& exp_avg_sqs,
                             const std::vector<Tensor>& max_exp_avg_sqs,
                             const std::vector<int64_t>& steps, const AdamStepArgs& args) {
  const size_t n = params.size();
  NeedSizes("adam_step", n,
            {{"grads", grads.size()},
             {"exp_avgs", exp_avgs.size()},
             {"exp_avg_sqs", exp_avg_sqs.size()},
             {"steps", steps.size()}});
  if (args.amsgrad) NeedSizes("adam_step", n, {{"max_exp_avg_sqs", max_exp_avg_sqs.size()}});
  std::vector<Tensor> ps = params, gs = grads, ms = exp_avgs, vs = exp_avg_sqs;
  std::vector<Tensor> vmaxs = args.amsgrad ? max_exp_avg_sqs : std::vector<Tensor>();
  ToShards(&ps, &gs, {&ms, &vs, &vmaxs});
  std::vector<Group> groups;
  std::vector<size_t> left = Sort(
      "adam_step", ps, gs,
      [&](size_t i) {
        std::vector<Tensor> s{ms[i], vs[i]};
        if (args.amsgrad) s.push_back(vmaxs[i]);
        return s;
      },
      &groups);
  for (const Group& group : groups) {
    std::vector<int64_t> group_steps;
    group_steps.reserve(group.index.size());
    for (size_t i : group.index) group_steps.push_back(steps[i]);
    Issue("adam_step", group,
          Attrs(kernels::AdamStepAttrs(), args.lr, args.beta1, args.beta2, args.eps,
                args.weight_decay, args.amsgrad, args.decoupled, args.maximize, group_steps));
  }
  return left;
}

std::vector<size_t> SgdStep(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                            const std::vector<Tensor>& bufs, const std::vector<bool>& firsts,
                            const SgdStepArgs& args) {
  const size_t n = params.size();
  const bool momentum = args.momentum != 0;
  NeedSizes("sgd_step", n, {{"grads", grads.size()}});
  if (momentum) NeedSizes("sgd_step", n, {{"bufs", bufs.size()}, {"firsts", firsts.size()}});
  std::vector<Tensor> ps = params, gs = grads;
  std::vector<Tensor> bs = momentum ? bufs : std::vector<Tensor>();
  ToShards(&ps, &gs, {&bs});
  std::vector<Group> groups;
  std::vector<size_t> left = Sort(
      "sgd_step", ps, gs,
      [&](size_t i) { return momentum ? std::vector<Tensor>{bs[i]} : std::vector<Tensor>{}; },
      &groups);
  for (const Group& group : groups) {
    std::vector<int64_t> group_firsts;
    group_firsts.reserve(group.index.size());
    for (size_t i : group.index) group_firsts.push_back(momentum && firsts[i] ? 1 : 0);
    Issue("sgd_step", group,
          Attrs(kernels::SgdStepAttrs(), args.lr, args.momentum, args.dampening, args.weight_decay,
                args.nesterov, args.maximize, group_firsts));
  }
  return left;
}

}  // namespace ofl::functional
