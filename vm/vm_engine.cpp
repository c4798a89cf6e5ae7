#include "vm/vm_engine.h"

#include <algorithm>
#include <mutex>

#include "vm/log.h"
#include "vm/stream.h"
#include "vm/trace.h"

namespace ofl::vm {

void VmEngine::Connect(Instruction* instr, const InstrRef& pred) {
  if (!pred || pred.get() == instr) return;
  const bool cross = pred->stream() != instr->stream();
  if (instr->trace) {
    if (std::find(instr->dep_ids.begin(), instr->dep_ids.end(), pred->id()) ==
        instr->dep_ids.end()) {
      instr->dep_ids.push_back(pred->id());
      instr->dep_cross_stream.push_back(cross);
      instr->trace_preds.push_back(pred);
    }
  }
  // Same stream: the queue's order already serialises them. Finished: nothing to wait for.
  if (!cross || pred->done()) return;
  for (const InstrRef& w : instr->wait_for) {
    if (w.get() == pred.get()) return;
  }
  instr->wait_for.push_back(pred);
}

void VmEngine::ConsumeDependences(Instruction* instr) {
  InstructionPolicy* policy = instr->policy();
  for (const BlobPtr& blob : policy->writes()) {
    blob->MarkIssued();
    Dependence& dep = blob->dependence();
    Connect(instr, dep.last_writer);
    for (const InstrRef& r : dep.readers) Connect(instr, r);
    dep.readers.clear();
    dep.last_writer = InstrRef(instr);
  }
  for (const BlobPtr& blob : policy->reads()) {
    const auto& writes = policy->writes();
    if (std::find(writes.begin(), writes.end(), blob) != writes.end()) continue;
    blob->MarkIssued();
    Dependence& dep = blob->dependence();
    Connect(instr, dep.last_writer);
    dep.readers.push_back(InstrRef(instr));
    if (dep.readers.size() >= 64 && dep.readers.size() == dep.readers.capacity()) {
      // A tensor read a million times must not keep a million finished readers alive: a full
      // list drops its finished readers, and grows now if that freed less than half of it, so
      // the next prune waits for at least as many reads again (constant time per read, amortised).
      dep.readers.RemoveIf([](const InstrRef& r) { return r->done(); });
      if (dep.readers.size() > dep.readers.capacity() / 2) {
        dep.readers.reserve(2 * dep.readers.capacity());
      }
    }
  }
}

bool VmEngine::ClaimInline(Instruction* instr, const IssueContext& ctx) {
  // A worker issuing work keeps it asynchronous: its own stream may be the one claimed, and the
  // work it issues may wait for what it runs.
  if (ctx.on_worker || !instr->wait_for.empty()) return false;
  const int64_t bytes = instr->policy()->InlineBytes();
  if (ctx.inline_limit <= 0 || bytes < 0 || bytes > ctx.inline_limit) return false;
  return instr->stream()->TryClaimInline();
}

void VmEngine::IssueAndDispatch(SmallObjectVector<InstrRef>& batch, const IssueContext& ctx,
                                InlineRuns* run_here, Graveyard* graveyard) {
  std::lock_guard<Mutex> lock(mu_);
  for (InstrRef& ref : batch) {
    Instruction* instr = ref.get();
    instr->id_ = next_instr_id_.fetch_add(1, std::memory_order_relaxed);
    instr->trace = ctx.tracing;
    if (ctx.tracing) {
      instr->issue_ns = NowNs();
      instr->issue_thread = ctx.issue_thread;
    }
    ConsumeDependences(instr);
    pressure_->CountSubmitted();
    const bool inline_run = ClaimInline(instr, ctx);
    if (ctx.log_debug) {
      Logger().debug("[#{} {}] issued {} {} (waits for {} instruction(s) on other streams){}",
                     instr->id(), instr->stream()->name(), instr->policy()->policy_name(),
                     instr->policy()->op_name(), instr->wait_for.size(),
                     inline_run ? "; runs inline on the issuing thread" : "");
    }
    in_flight_.push_back(ref);
    if (inline_run) {
      run_here->Add(instr);
    } else {
      instr->stream()->Push(instr);
    }
  }
  Reap(false, graveyard);
}

VmEngine::ReleasePlan VmEngine::PlanRelease(const BlobPtr& blob, bool fold, bool free_when_done) {
  std::lock_guard<Mutex> lock(mu_);
  Dependence& dep = blob->dependence();
  Instruction* last = nullptr;
  bool one_stream = true;
  auto consider = [&](const InstrRef& a) {
    if (!a || a->done()) return;
    if (last != nullptr && a->stream() != last->stream()) one_stream = false;
    if (last == nullptr || a->id() > last->id()) last = a.get();
  };
  consider(dep.last_writer);
  for (const InstrRef& r : dep.readers) consider(r);
  // Every user finished: nothing to order the free after.
  const bool all_done = last == nullptr && free_when_done;
  // The block counts as free from the tensor's death on (PyTorch's rule), although the free
  // itself waits for the users to complete. Marked before the free is arranged, so it is marked
  // before the free can happen.
  if (!all_done) blob->MarkDead();
  if (!all_done && !(fold && one_stream)) return ReleasePlan::kIssue;
  bool attached = false;
  if (last != nullptr) {
    // On one stream, everything else using the blob runs before `last`.
    EagerBlobObject* head = last->releases_.load(std::memory_order_acquire);
    while (head != kReleasesClosed) {
      blob->next_release = head;
      if (last->releases_.compare_exchange_weak(head, blob.get(), std::memory_order_acq_rel)) {
        attached = true;
        break;
      }
    }
    if (attached && last->trace) last->folded_releases.push_back(blob->id());
  }
  // The blob stays alive until `last` retires: its policy holds it.
  dep.last_writer.reset();
  dep.readers.clear();
  return attached ? ReleasePlan::kFolded : ReleasePlan::kFreeNow;
}

void VmEngine::ForgetInDependences(Instruction* instr) {
  const InstructionPolicy* policy = instr->policy();
  if (policy == nullptr) return;
  for (const BlobPtr& blob : policy->writes()) {
    Dependence& dep = blob->dependence();
    if (dep.last_writer.get() == instr) dep.last_writer.reset();
  }
  for (const BlobPtr& blob : policy->reads()) {
    ReaderList& readers = blob->dependence().readers;
    for (size_t i = 0; i < readers.size(); ++i) {
      if (readers[i].get() == instr) {
        readers[i] = std::move(readers.back());
        readers.pop_back();
        break;
      }
    }
  }
}

void VmEngine::Reap(bool all, Graveyard* graveyard) {
  auto retire = [&](Instruction* instr) {
    if (instr->trace) {
      tracer_->RecordTrace(instr);
    } else {
      // A finished instruction orders nothing (Connect and PlanRelease skip it), so the blobs it
      // used let go of it: a live tensor must not keep its producer's instruction alive. A traced
      // one stays, so that the trace shows edges to it.
      ForgetInDependences(instr);
    }
    // Dropping the policy releases the blobs it held: a finished instruction left in a blob's
    // dependence must not keep other blobs (and, through them, itself) alive.
    graveyard->Add(instr->ReleaseOperands());
  };
  while (!in_flight_.empty() && in_flight_.front()->done()) {
    retire(in_flight_.front().get());
    in_flight_.pop_front();
  }
  // An upper bound on what is in flight, without reading the workers' counter.
  const int64_t pending = pressure_->PendingBound();
  if (all || static_cast<int64_t>(in_flight_.size()) > 2 * pending + 1024) {
    // Something slow sits at the front; retire the finished ones behind it.
    InFlight keep;
    for (InstrRef& ref : in_flight_) {
      if (ref->done()) {
        retire(ref.get());
      } else {
        keep.push_back(std::move(ref));
      }
    }
    in_flight_.swap(keep);
  }
}

void VmEngine::ReapAll() {
  Graveyard graveyard;
  std::lock_guard<Mutex> lock(mu_);
  Reap(true, &graveyard);
}

}  // namespace ofl::vm
