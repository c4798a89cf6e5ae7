// The built-in workloads (see workloads.h). Each checks its own results, so a trace of a wrong run
// is never mistaken for a good one.
#include "tools/vm_trace/workloads.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "kernels/kernel.h"
#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

namespace ofl::vm_trace {
namespace {

template <class T>
std::vector<T> Iota(int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(i);
  return v;
}

void PrintTensor(std::FILE* out, const char* label, const Tensor& t) {
  const std::vector<float> v = t.to_vector<float>();
  if (out == nullptr) return;
  std::fprintf(out, "%-44s shape %-18s stride %-22s contiguous=%d\n  values:", label,
               t.shape().str().c_str(), ToString(t.stride()).c_str(), t.is_contiguous() ? 1 : 0);
  const size_t shown = v.size() < 24 ? v.size() : 24;
  for (size_t i = 0; i < shown; ++i) std::fprintf(out, " %g", v[i]);
  if (shown < v.size()) std::fprintf(out, " ... (%zu values)", v.size());
  std::fprintf(out, "\n");
}

void Report(const WorkloadOptions& o, int64_t done, int64_t total) {
  if (o.progress) o.progress(done, total);
}

// Throws when a workload computed something other than what it should have.
void Check(bool ok, const std::string& workload, const std::string& what) {
  if (!ok) throw std::runtime_error(workload + ": wrong result: " + what);
}

void RunDemo(const WorkloadOptions& o, int64_t rounds) {
  std::FILE* out = o.out;
  auto say = [&](const char* text) {
    if (out != nullptr) std::fputs(text, out);
  };
  say("== expand (4,3,1,2) -> (4,3,5,2): a view with stride 0 on the broadcast dim\n");
  Tensor a = tensor(Iota<float>(24), {4, 3, 1, 2}, o.device);
  Tensor a_exp = a.expand({4, 3, 5, 2});
  PrintTensor(out, "a.expand({4,3,5,2})", a_exp);
  PrintTensor(out, "a.expand({4,3,5,2}).contiguous()", a_exp.contiguous());

  say("\n== expand (1,4,3,5) -> (2,1,2,4,3,5): new leading dims\n");
  Tensor b = tensor(Iota<float>(60), {1, 4, 3, 5}, o.device);
  PrintTensor(out, "b.expand({2,1,2,4,3,5})", b.expand({2, 1, 2, 4, 3, 5}));

  say("\n== repeat (4,1,3,5) by (2,1,2,4,1,1): its own kernel, contiguous output\n");
  Tensor c = tensor(Iota<float>(60), {4, 1, 3, 5}, o.device);
  Tensor c_rep = c.repeat({2, 1, 2, 4, 1, 1});
  PrintTensor(out, "c.repeat({2,1,2,4,1,1})", c_rep);
  Tensor c_grad = repeat_backward(c_rep, c.shape(), {2, 1, 2, 4, 1, 1});
  PrintTensor(out, "repeat_backward(.., (4,1,3,5), ..) = 16*c", c_grad);

  say("\n== a chain whose temporaries die (each release folds into the last user of the dead "
      "blob)\n");
  Tensor x = tensor(Iota<float>(6), {2, 1, 3}, o.device);
  Tensor acc = x;
  for (int64_t i = 0; i < rounds; ++i) {
    Tensor wide = acc.expand({2, 4, 3}).contiguous();  // dies at the end of the iteration
    acc = expand_backward(wide, acc.shape());          // the old acc dies here
    Report(o, i + 1, rounds);
  }
  const std::string label = "x after " + std::to_string(rounds) + " rounds of expand x4 + backward";
  PrintTensor(out, label.c_str(), acc);
  sync();
}

// Rounds of expand -> contiguous -> expand_backward and repeat -> repeat_backward; every round
// multiplies by 4 * 12 = 48, and every 8 rounds the chain starts again from x (so floats stay
// exact). Every intermediate dies as soon as the next one exists.
void RunChain(const WorkloadOptions& o, int64_t rounds) {
  const std::vector<float> xs = {1, 2, 3, 4, 5, 6};
  Tensor x = tensor(xs, {2, 1, 3}, o.device);
  Tensor acc = x;
  int64_t since_reset = 0;
  for (int64_t i = 0; i < rounds; ++i) {
    if (i % 8 == 0) {
      acc = x;
      since_reset = 0;
    }
    // Odd rounds reduce the strided view directly, even rounds a contiguous copy of it.
    Tensor wide = acc.expand({2, 4, 3});
    if (i % 2 == 0) wide = wide.contiguous();
    acc = expand_backward(wide, acc.shape());
    wide = Tensor();
    Tensor tiled = acc.repeat({2, 3, 1, 2});
    acc = repeat_backward(tiled, acc.shape(), {2, 3, 1, 2});
    ++since_reset;
    Report(o, i + 1, rounds);
  }
  const std::vector<float> got = acc.to_vector<float>();
  const double factor = std::pow(48.0, static_cast<double>(since_reset));
  for (size_t k = 0; k < xs.size(); ++k) {
    Check(got[k] == static_cast<float>(xs[k] * factor), "chain",
          "element " + std::to_string(k) + " is " + std::to_string(got[k]) + ", expected " +
              std::to_string(xs[k] * factor));
  }
  if (o.out != nullptr) {
    std::fprintf(o.out,
                 "chain: %lld rounds of expand/contiguous/expand_backward + repeat/"
                 "repeat_backward on %s; result = x * 48^%lld, checked\n",
                 static_cast<long long>(rounds), o.device.str().c_str(),
                 static_cast<long long>(since_reset));
  }
  sync();
}

// A gate that instructions on the side streams park on until the main thread opens it, so that
// tensors die while their readers on several streams are still pending (and their frees become
// ReleaseTensor instructions ordered after every reader). Waits at most a few seconds.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// A tensor whose storage is first written (and allocated) on `stream`.
Tensor TensorOn(const Shape& shape, DType dtype, vm::Stream* stream) {
  const size_t bytes = static_cast<size_t>(shape.numel()) * element_size(dtype);
  StorageRef storage(std::make_shared<Storage>(stream->device(), bytes, stream, dtype));
  return Tensor(std::make_shared<TensorImpl>(shape, RowMajorStrides(shape), 0, std::move(storage)));
}

// One source tensor read by `rounds` copies on each of four streams (compute, h2d, d2h, aux) and
// by a checksum callback; a join on the compute stream reads every copy. The handles are dropped
// while the side streams are parked, so the trace shows cross-stream edges and ReleaseTensors.
void RunFanout(const WorkloadOptions& o, int64_t rounds) {
  using vm::StreamRole;
  constexpr int64_t kNumel = 16 << 10;
  auto& vm = vm::VirtualMachine::Get();
  std::vector<vm::Stream*> streams;
  for (StreamRole role : {StreamRole::kCompute, StreamRole::kHost2Device, StreamRole::kDevice2Host,
                          StreamRole::kAux}) {
    streams.push_back(vm.devices().GetStream(o.device, role));
  }
  const kernels::KernelFn copy = kernels::FindKernel("copy", o.device.type());
  const std::vector<float> values = Iota<float>(kNumel);
  double want = 0;
  for (float v : values) want += v;

  Tensor src = tensor(values, {kNumel}, o.device);
  Tensor total = TensorOn(Shape({1}), DType::kFloat64, streams[0]);
  auto gate = std::make_shared<Gate>();
  auto checksum = std::make_shared<double>(-1);
  std::vector<Tensor> copies;
  {
    vm::InstructionsBuilder b;
    for (size_t s = 1; s < streams.size(); ++s) {
      b.Function(
          "gate", {}, {}, [gate] { gate->Wait(); }, streams[s]);
    }
    for (int64_t i = 0; i < rounds; ++i) {
      for (vm::Stream* stream : streams) {
        Tensor dst = TensorOn(Shape({kNumel}), DType::kFloat32, stream);
        b.OpCall("copy", copy, {src.impl()->arg()}, {dst.impl()->arg()}, {}, stream);
        copies.push_back(std::move(dst));
      }
    }
    b.AccessBlobByCallback(
        "checksum", src.impl()->arg(),
        [checksum](const kernels::TensorArg& t) {
          const float* p = static_cast<const float*>(t.data);
          double sum = 0;
          for (int64_t k = 0; k < t.shape.numel(); ++k) sum += p[k];
          *checksum = sum;
        },
        vm::AccessModifier::kConst, streams[2]);
    std::vector<vm::BlobPtr> reads;
    std::vector<vm::EagerBlobObject*> raw;
    for (const Tensor& t : copies) {
      reads.push_back(t.impl()->blob());
      raw.push_back(t.impl()->blob().get());
    }
    vm::EagerBlobObject* total_blob = total.impl()->blob().get();
    b.Function(
        "join", reads, {total.impl()->blob()},
        [raw, total_blob] {
          double sum = 0;
          for (vm::EagerBlobObject* blob : raw) {
            const float* p = reinterpret_cast<const float*>(blob->data());
            for (int64_t k = 0; k < kNumel; ++k) sum += p[k];
          }
          *reinterpret_cast<double*>(total_blob->data()) = sum;
        },
        streams[0]);
    // Submitted without PhysicalRun: in OFL_VM_SYNC=1 mode it would wait for the parked gates.
    vm.Submit(b.instructions());
  }
  // In OFL_VM_SYNC=1 mode each release waits for itself; let the readers go first there.
  if (vm.sync_mode()) gate->Open();
  src = Tensor();
  copies.clear();
  gate->Open();
  Report(o, rounds, rounds);
  const std::vector<double> got = total.to_vector<double>();
  sync();
  const double want_total = want * static_cast<double>(rounds * 4);
  Check(*checksum == want, "fanout",
        "checksum " + std::to_string(*checksum) + ", expected " + std::to_string(want));
  Check(got[0] == want_total, "fanout",
        "join total " + std::to_string(got[0]) + ", expected " + std::to_string(want_total));
  if (o.out != nullptr) {
    std::fprintf(o.out,
                 "fanout: one %lld-float tensor read by %lld copies on each of %zu streams, a "
                 "checksum on %s and a join on %s; results checked\n",
                 static_cast<long long>(kNumel), static_cast<long long>(rounds), streams.size(),
                 streams[2]->name().c_str(), streams[0]->name().c_str());
  }
}

// Many tiny ops: a repeat and an expand + contiguous of a 4-element tensor per iteration.
void RunStress(const WorkloadOptions& o, int64_t iters) {
  Tensor x = tensor<float>({1, 2, 3, 4}, {4}, o.device);
  Tensor last;
  const int64_t every = std::max<int64_t>(1, iters / 200);
  for (int64_t i = 0; i < iters; ++i) {
    Tensor y = x.repeat({2});
    last = y.expand({3, 8}).contiguous();
    if ((i + 1) % every == 0 || i + 1 == iters) Report(o, i + 1, iters);
  }
  if (iters > 0) {
    const std::vector<float> got = last.to_vector<float>();
    Check(got.size() == 24 && got[0] == 1 && got[5] == 2 && got[23] == 4, "stress",
          "the last output is not (1,2,3,4,1,2,3,4) three times");
  }
  sync();
  if (o.out != nullptr) {
    std::fprintf(o.out, "stress: %lld iterations of repeat + expand + contiguous on %s\n",
                 static_cast<long long>(iters), o.device.str().c_str());
  }
}

// A global program over every rank of the world (one process without mpiexec): x, logical
// (2n,1,3) split on dim 0, goes through S(0)->B (an all-gather), expand, B->S(1) (a local slice),
// expand_backward (a split on the summed dim: a partial sum), P->B (an all-reduce), repeat, B->S(0)
// and repeat_backward; every round multiplies by 4 * 4 = 16 and every 4 rounds it starts again
// from x (floats stay exact). Every rank checks the result; rank 0 prints.
void RunGlobal(const WorkloadOptions& o, int64_t rounds) {
  if (!o.device.is_cpu()) {
    throw InvalidArgument(
        "ofl_vm_trace: workload global: placements are on cpu only, got --device " +
        o.device.str());
  }
  init_distributed();
  const int n = world_size();
  const int me = rank();
  std::vector<int> all(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) all[static_cast<size_t>(r)] = r;
  const Placement world("cpu", all);
  const Shape shape({2 * int64_t{n}, 1, 3});
  std::vector<float> shard;  // rows 2*me and 2*me + 1 of the logical 1, 2, 3, ...
  for (int64_t k = 0; k < 6; ++k) shard.push_back(static_cast<float>(6 * me + k + 1));
  const Tensor x = tensor(shard, Shape({2, 1, 3}), Device("cpu")).to_global(world, Sbp::split(0));
  Tensor acc = x;
  int64_t since_reset = 0;
  for (int64_t i = 0; i < rounds; ++i) {
    if (i % 4 == 0) {
      acc = x;
      since_reset = 0;
    }
    const Tensor wide = acc.to_global(world, Sbp::broadcast()).expand({2 * int64_t{n}, 4, 3});
    const Tensor sum = expand_backward(wide.to_global(world, Sbp::split(1)), shape);
    const Tensor tiled = sum.to_global(world, Sbp::broadcast()).repeat({1, 2, 2});
    acc = repeat_backward(tiled.to_global(world, Sbp::split(0)), shape, {1, 2, 2});
    ++since_reset;
    Report(o, i + 1, rounds);
  }
  const std::vector<float> got = acc.to_vector<float>();
  const double factor = std::pow(16.0, static_cast<double>(since_reset));
  Check(got.size() == static_cast<size_t>(6 * n), "global",
        std::to_string(got.size()) + " values, expected " + std::to_string(6 * n));
  for (size_t k = 0; k < got.size(); ++k) {
    const double want = static_cast<double>(k + 1) * factor;
    Check(got[k] == static_cast<float>(want), "global",
          "element " + std::to_string(k) + " is " + std::to_string(got[k]) + ", expected " +
              std::to_string(want));
  }
  sync();
  if (o.out != nullptr && me == 0) {
    std::fprintf(o.out,
                 "global: %d rank(s), %lld rounds of S(0)->B (all-gather), expand, B->S(1), "
                 "expand_backward (partial sum), P->B (all-reduce), repeat, B->S(0), "
                 "repeat_backward; logical %s result = x * 16^%lld, checked on every rank\n",
                 n, static_cast<long long>(rounds), shape.str().c_str(),
                 static_cast<long long>(since_reset));
  }
}

// A few steps of docs/autograd.md's fit_line training: forward, backward (its instructions are
// named "<Node>Backward.<op>" and "AccumulateGrad.<op>") and an update under NoGradGuard.
void RunAutograd(const WorkloadOptions& o, int64_t steps) {
  const Device& d = o.device;
  std::vector<float> xs(64), ys(64);
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(i) / 32.0f - 1.0f;
    ys[i] = 3.0f * xs[i] + 0.5f;
  }
  const Tensor x = tensor(xs, Shape({64}), d);
  const Tensor y = tensor(ys, Shape({64}), d);
  Tensor a = zeros(Shape(std::vector<int64_t>{}), DType::kFloat32, d);
  Tensor b = zeros(Shape(std::vector<int64_t>{}), DType::kFloat32, d);
  a.requires_grad_();
  b.requires_grad_();
  float first = 0, last = 0;
  for (int64_t i = 0; i < steps; ++i) {
    const Tensor err = a * x + b - y;
    const Tensor loss = (err * err).sum() / 64.0;
    loss.backward();
    {
      NoGradGuard no_grad;
      a.sub_(a.grad() * 0.1);
      b.sub_(b.grad() * 0.1);
    }
    a.set_grad(Tensor());
    b.set_grad(Tensor());
    last = loss.to_vector<float>()[0];
    if (i == 0) first = last;
    Report(o, i + 1, steps);
  }
  Check(steps < 2 || last < first, "autograd",
        "the loss did not fall: " + std::to_string(first) + " -> " + std::to_string(last));
  sync();
  if (o.out != nullptr) {
    std::fprintf(o.out, "autograd: %lld steps of fit_line on %s, loss %.4f -> %.4f\n",
                 static_cast<long long>(steps), d.str().c_str(), first, last);
  }
}

}  // namespace

const std::vector<WorkloadInfo>& Workloads() {
  static const std::vector<WorkloadInfo> kWorkloads = {
      {"demo", "expand and repeat examples with their results, then a chain freeing tensors", 3,
       "rounds of the final chain"},
      {"chain", "a long expand/expand_backward + repeat/repeat_backward chain, tensors dying", 64,
       "rounds, 5 ops each"},
      {"fanout",
       "one tensor read by copies on 4 streams + a join: cross-stream edges, ReleaseTensor", 8,
       "copies per stream"},
      {"stress", "many tiny ops: repeat + expand + contiguous of a 4-element tensor", 5000,
       "iterations, 2 ops each"},
      {"global",
       "global tensors over mpiexec's ranks: boxing, expand, repeat, backward (see GLOBAL)", 8,
       "rounds, 2 collectives each"},
      {"autograd", "gradient descent steps of fit_line: forward, backward() and the update", 3,
       "training steps"},
  };
  return kWorkloads;
}

const WorkloadInfo* FindWorkload(const std::string& name) {
  for (const WorkloadInfo& w : Workloads()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

void RunWorkload(const std::string& name, const WorkloadOptions& options) {
  const WorkloadInfo* info = FindWorkload(name);
  if (info == nullptr) {
    std::string names;
    for (const WorkloadInfo& w : Workloads()) names += (names.empty() ? "" : ", ") + w.name;
    throw InvalidArgument("ofl_vm_trace: unknown workload '" + name + "' (choose one of " + names +
                          ")");
  }
  if (options.iters < 0) {
    throw InvalidArgument("ofl_vm_trace: workload " + name + ": iters must be >= 0, got " +
                          std::to_string(options.iters));
  }
  // Fails early, with the VM's own message, on a device this build cannot use.
  vm::VirtualMachine::Get().devices().GetStream(options.device);
  const int64_t iters = options.iters > 0 ? options.iters : info->default_iters;
  if (name == "demo") {
    RunDemo(options, iters);
  } else if (name == "chain") {
    RunChain(options, iters);
  } else if (name == "fanout") {
    RunFanout(options, iters);
  } else if (name == "global") {
    RunGlobal(options, iters);
  } else if (name == "autograd") {
    RunAutograd(options, iters);
  } else {
    RunStress(options, iters);
  }
}

}  // namespace ofl::vm_trace
