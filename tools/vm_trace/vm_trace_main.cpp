// ofl_vm_trace: runs a built-in demo of the expand / repeat examples through the VM with tracing
// on, prints the results and one line per instruction saying what the VM did and why.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "vm/virtual_machine.h"

namespace {

template <class T>
std::vector<T> Iota(int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(i);
  return v;
}

void PrintTensor(const char* label, const ofl::Tensor& t) {
  const std::vector<float> v = t.to_vector<float>();
  std::printf("%-44s shape %-18s stride %-22s contiguous=%d\n  values:", label,
              t.shape().str().c_str(), ofl::ToString(t.stride()).c_str(),
              t.is_contiguous() ? 1 : 0);
  const size_t shown = v.size() < 24 ? v.size() : 24;
  for (size_t i = 0; i < shown; ++i) std::printf(" %g", v[i]);
  if (shown < v.size()) std::printf(" ... (%zu values)", v.size());
  std::printf("\n");
}

std::string Ids(const char* prefix, const std::vector<uint64_t>& ids) {
  if (ids.empty()) return "-";
  std::string s;
  for (uint64_t id : ids) s += (s.empty() ? "" : ",") + std::string(prefix) + std::to_string(id);
  return s;
}

void PrintTrace(const std::vector<ofl::vm::TraceRecord>& trace) {
  if (trace.empty()) return;
  int64_t t0 = trace.front().issue_ns;
  for (const auto& r : trace) t0 = std::min(t0, r.issue_ns);
  auto us = [&](int64_t ns) { return static_cast<double>(ns - t0) / 1000.0; };
  std::printf("\n%-5s %-20s %-16s %-15s %-8s %-8s %-20s %-14s %-10s %s\n", "id", "policy", "op",
              "stream", "reads", "writes", "waited for", "allocation", "then frees",
              "issue -> ready -> start -> end (us)");
  for (const auto& r : trace) {
    std::string waited;
    for (size_t i = 0; i < r.deps.size(); ++i) {
      waited += (waited.empty() ? "" : ",") + std::string("#") + std::to_string(r.deps[i]) +
                (r.dep_cross_stream[i] ? "(event)" : "(fifo)");
    }
    if (waited.empty()) waited = "-";
    std::string alloc;
    for (const auto& a : r.allocs) {
      alloc += (alloc.empty() ? "" : ",") + std::to_string(a.bytes) + "B " +
               (a.cache_hit ? "hit" : "miss");
    }
    if (alloc.empty()) alloc = "-";
    std::printf(
        "#%-4llu %-20s %-16s %-15s %-8s %-8s %-20s %-14s %-10s %.1f -> %.1f -> %.1f -> %.1f%s%s\n",
        static_cast<unsigned long long>(r.id), r.policy.c_str(), r.op.c_str(), r.stream.c_str(),
        Ids("b", r.reads).c_str(), Ids("b", r.writes).c_str(), waited.c_str(), alloc.c_str(),
        Ids("b", r.folded_releases).c_str(), us(r.issue_ns), us(r.ready_ns), us(r.start_ns),
        us(r.end_ns), r.error.empty() ? "" : "  ERROR: ", r.error.c_str());
  }
}

int RunDemo() {
  using ofl::Tensor;
  auto& vm = ofl::vm::VirtualMachine::Get();
  vm.SetTracing(true);

  std::printf("== expand (4,3,1,2) -> (4,3,5,2): a view with stride 0 on the broadcast dim\n");
  Tensor a = ofl::tensor(Iota<float>(24), {4, 3, 1, 2});
  Tensor a_exp = a.expand({4, 3, 5, 2});
  PrintTensor("a.expand({4,3,5,2})", a_exp);
  PrintTensor("a.expand({4,3,5,2}).contiguous()", a_exp.contiguous());

  std::printf("\n== expand (1,4,3,5) -> (2,1,2,4,3,5): new leading dims\n");
  Tensor b = ofl::tensor(Iota<float>(60), {1, 4, 3, 5});
  PrintTensor("b.expand({2,1,2,4,3,5})", b.expand({2, 1, 2, 4, 3, 5}));

  std::printf("\n== repeat (4,1,3,5) by (2,1,2,4,1,1): its own kernel, contiguous output\n");
  Tensor c = ofl::tensor(Iota<float>(60), {4, 1, 3, 5});
  Tensor c_rep = c.repeat({2, 1, 2, 4, 1, 1});
  PrintTensor("c.repeat({2,1,2,4,1,1})", c_rep);
  Tensor c_grad = ofl::repeat_backward(c_rep, c.shape(), {2, 1, 2, 4, 1, 1});
  PrintTensor("repeat_backward(.., (4,1,3,5), ..) = 16*c", c_grad);

  std::printf(
      "\n== a chain whose temporaries die (each release folds into the last user of the dead "
      "blob)\n");
  Tensor x = ofl::tensor(Iota<float>(6), {2, 1, 3});
  Tensor acc = x;
  for (int i = 0; i < 3; ++i) {
    Tensor wide = acc.expand({2, 4, 3}).contiguous();  // dies at the end of the iteration
    acc = ofl::expand_backward(wide, acc.shape());     // the old acc dies here
  }
  PrintTensor("x after 3 rounds of expand x4 + backward", acc);
  ofl::sync();
  auto trace = vm.TakeTrace();
  vm.SetTracing(false);
  PrintTrace(trace);

  const ofl::MemoryStats s = ofl::memory_stats(ofl::Device("cpu"));
  std::printf(
      "\n%zu instructions; cpu:0 pool: allocated %lld B, reserved %lld B, peak allocated %lld B, "
      "%lld requests, %lld hits, %lld misses\n",
      trace.size(), static_cast<long long>(s.allocated_bytes),
      static_cast<long long>(s.reserved_bytes), static_cast<long long>(s.peak_allocated_bytes),
      static_cast<long long>(s.alloc_requests), static_cast<long long>(s.cache_hits),
      static_cast<long long>(s.cache_misses));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
      std::printf(
          "usage: ofl_vm_trace\n  Runs the built-in demo (expand and repeat examples, a chain that "
          "frees tensors)\n  with VM tracing on, prints the results and one line per instruction:\n"
          "  id, policy, op, stream, blobs read/written, what it waited for (fifo = same-stream\n"
          "  order, event = a cross-stream wait), allocation (bytes, pool hit or miss), the\n"
          "  blobs of dead tensors it freed after running (a release folded into their last\n"
          "  user; a ReleaseTensor instruction is issued only when users span streams) and\n"
          "  issue -> ready -> start -> end times in microseconds.\n");
      return 0;
    }
    std::fprintf(stderr, "ofl_vm_trace: unknown argument '%s' (try --help)\n", argv[1]);
    return 2;
  }
  try {
    return RunDemo();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ofl_vm_trace: %s\n", e.what());
    return 1;
  }
}
