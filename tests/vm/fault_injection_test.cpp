// Fault injection over a realistic program: the pool's test hook (CachingAllocator::SetFailAt)
// makes the N-th allocation fail, and a test kernel registered as "fault_test_copy" throws at its
// N-th launch. For every N in a sweep over the program's allocations and launches: the error
// surfaces at the first wait that touches a tensor computed from the failed op (or at the call in
// OFL_VM_SYNC=1 mode) with the right type and the op's name, tensors that do not depend on the
// failure read back the reference values, the pool's allocated bytes return to their pre-program
// value once every tensor died, and the next, fault-free run of the program gives the reference
// results again. Runs on the CPU whatever OFL_TEST_DEVICE says: the fault kernel is a CPU kernel,
// and on an asynchronous device the VM retries a failed allocation once after draining the device,
// which absorbs a single injected pool fault.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "tests/vm/cpu_allocator_backend.h"
#include "tests/vm/vm_test_util.h"
#include "vm/instructions_builder.h"
#include "vm/log.h"
#include "vm/virtual_machine.h"

namespace ofl {
namespace {

using vm::testing::ScopeGuard;

// ---- The fault kernel: "copy" that throws at the armed launch. ----

// Launches left until the injected kernel failure; 0 = off.
std::atomic<int64_t> g_kernel_fail_countdown{0};
std::atomic<int64_t> g_kernel_launches{0};

void FaultTestCopyKernel(const kernels::KernelContext& ctx) {
  const int64_t launch = g_kernel_launches.fetch_add(1) + 1;
  int64_t left = g_kernel_fail_countdown.load();
  while (left > 0 && !g_kernel_fail_countdown.compare_exchange_weak(left, left - 1)) {
  }
  if (left == 1) {
    throw DeviceError("fault_test_copy: injected kernel fault at launch " + std::to_string(launch));
  }
  kernels::cpu::CopyKernel(ctx);
}

kernels::KernelFn FaultKernel() {
  static const kernels::KernelFn fn = [] {
    kernels::RegisterKernel("fault_test_copy", DeviceType::kCPU, &FaultTestCopyKernel);
    return kernels::FindKernel("fault_test_copy", DeviceType::kCPU);
  }();
  return fn;
}

// ---- A plain reference: contiguous float values with a shape, no code shared with the VM. ----

struct Ref {
  std::vector<int64_t> shape;
  std::vector<float> v;
};

int64_t Numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The multi-index of flat (row-major) position i in shape s.
std::vector<int64_t> Unflatten(int64_t i, const std::vector<int64_t>& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

int64_t Flatten(const std::vector<int64_t>& idx, const std::vector<int64_t>& s) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + idx[d];
  return f;
}

// Output index -> input index where the input is right-aligned and size-1 dims broadcast
// (expand) or wrap (repeat, with wrap = true).
int64_t SourceIndex(const std::vector<int64_t>& out_idx, const std::vector<int64_t>& in_shape,
                    bool wrap) {
  const size_t lead = out_idx.size() - in_shape.size();
  std::vector<int64_t> in_idx(in_shape.size());
  for (size_t d = 0; d < in_shape.size(); ++d) {
    const int64_t o = out_idx[lead + d];
    in_idx[d] = wrap ? o % in_shape[d] : (in_shape[d] == 1 ? 0 : o);
  }
  return Flatten(in_idx, in_shape);
}

Ref RefExpand(const Ref& x, const std::vector<int64_t>& sizes) {
  Ref r;
  const size_t lead = sizes.size() - x.shape.size();
  for (size_t d = 0; d < sizes.size(); ++d) {
    r.shape.push_back(sizes[d] == -1 ? x.shape[d - lead] : sizes[d]);
  }
  for (int64_t i = 0; i < Numel(r.shape); ++i) {
    r.v.push_back(x.v[SourceIndex(Unflatten(i, r.shape), x.shape, false)]);
  }
  return r;
}

Ref RefRepeat(const Ref& x, const std::vector<int64_t>& reps) {
  Ref r;
  const size_t lead = reps.size() - x.shape.size();
  for (size_t d = 0; d < reps.size(); ++d) {
    r.shape.push_back(reps[d] * (d < lead ? 1 : x.shape[d - lead]));
  }
  for (int64_t i = 0; i < Numel(r.shape); ++i) {
    r.v.push_back(x.v[SourceIndex(Unflatten(i, r.shape), x.shape, true)]);
  }
  return r;
}

Ref RefPermute(const Ref& x, const std::vector<int64_t>& dims) {
  Ref r;
  for (int64_t d : dims) r.shape.push_back(x.shape[d]);
  for (int64_t i = 0; i < Numel(r.shape); ++i) {
    const std::vector<int64_t> o = Unflatten(i, r.shape);
    std::vector<int64_t> in(o.size());
    for (size_t d = 0; d < dims.size(); ++d) in[dims[d]] = o[d];
    r.v.push_back(x.v[Flatten(in, x.shape)]);
  }
  return r;
}

Ref RefNarrow(const Ref& x, int64_t dim, int64_t start, int64_t length) {
  Ref r;
  r.shape = x.shape;
  r.shape[dim] = length;
  for (int64_t i = 0; i < Numel(r.shape); ++i) {
    std::vector<int64_t> idx = Unflatten(i, r.shape);
    idx[dim] += start;
    r.v.push_back(x.v[Flatten(idx, x.shape)]);
  }
  return r;
}

// Sums dy into in_shape: every dy element lands on its (broadcast or wrapped) source index.
Ref RefSumBack(const Ref& dy, const std::vector<int64_t>& in_shape, bool wrap) {
  Ref r;
  r.shape = in_shape;
  r.v.assign(Numel(in_shape), 0.0f);
  for (int64_t i = 0; i < Numel(dy.shape); ++i) {
    r.v[SourceIndex(Unflatten(i, dy.shape), in_shape, wrap)] += dy.v[i];
  }
  return r;
}

// ---- The program: steps over slots, run on ofl and on the reference. ----

enum class Kind {
  kHost,
  kExpand,
  kContiguous,
  kRepeat,
  kPermute,
  kNarrow,
  kReshape,
  kExpandBackward,
  kRepeatBackward,
  kFaultCopy,  // InstructionsBuilder::OpCall with the fault kernel
  kRead,       // a read-back in the middle of the program
  kDrop,       // the tensor dies
};

struct Step {
  Kind kind;
  int in = -1;                 // the input step (or the step read / dropped)
  std::vector<int64_t> ints;   // sizes, repeats, dims, shape or (dim, start, length)
  std::vector<int64_t> ints2;  // input_shape of the backward ops
};

const char* OpName(Kind k) {
  switch (k) {
    case Kind::kHost:
      return "from_host";
    case Kind::kContiguous:
      return "contiguous";
    case Kind::kRepeat:
      return "repeat";
    case Kind::kExpandBackward:
      return "expand_backward";
    case Kind::kRepeatBackward:
      return "repeat_backward";
    case Kind::kFaultCopy:
      return "fault_test_copy";
    case Kind::kReshape:
      return "reshape";  // a reshape that cannot be a view copies (the copy is named for it)
    default:
      return "";
  }
}

std::vector<Step> MakeProgram() {
  std::vector<Step> p;
  auto add = [&](Step s) {
    p.push_back(std::move(s));
    return static_cast<int>(p.size()) - 1;
  };
  auto host = [&](std::vector<int64_t> shape) { return add({Kind::kHost, -1, std::move(shape)}); };
  auto op = [&](Kind k, int in, std::vector<int64_t> ints, std::vector<int64_t> ints2 = {}) {
    return add({k, in, std::move(ints), std::move(ints2)});
  };
  const int a = host({2, 3});
  const int b = host({3});
  const int c = host({4, 1});
  const int d = op(Kind::kExpand, b, {4, 3});
  const int e = op(Kind::kContiguous, d, {});
  const int f = op(Kind::kRepeat, a, {2, 1, 2});  // (2,2,6)
  const int g = op(Kind::kFaultCopy, f, {});
  const int h = op(Kind::kPermute, g, {2, 0, 1});  // (6,2,2)
  const int i = op(Kind::kContiguous, h, {});
  op(Kind::kRead, e, {});
  const int j = op(Kind::kExpandBackward, e, {}, {1, 3});
  const int k = op(Kind::kRepeatBackward, f, {2, 1, 2}, {2, 3});
  const int ce = op(Kind::kExpand, c, {4, 5});
  const int l = op(Kind::kFaultCopy, ce, {});     // a strided (broadcast) input
  const int m = op(Kind::kNarrow, l, {1, 1, 3});  // (4,3)
  const int n = op(Kind::kContiguous, m, {});
  op(Kind::kDrop, l, {});
  op(Kind::kDrop, m, {});
  const int o = op(Kind::kRepeat, n, {2, 1});  // (8,3)
  const int q = host({2, 2});
  const int r = op(Kind::kRepeat, q, {3, 3});  // (6,6)
  op(Kind::kRead, o, {});
  const int s = op(Kind::kFaultCopy, r, {});
  const int t = op(Kind::kReshape, s, {3, 12});
  const int tp = op(Kind::kPermute, t, {1, 0});  // (12,3)
  const int u = op(Kind::kContiguous, tp, {});
  op(Kind::kDrop, s, {});
  op(Kind::kDrop, t, {});
  const int v = op(Kind::kRepeatBackward, u, {3, 1}, {4, 3});
  const int pb = op(Kind::kExpandBackward, o, {}, {1, 3});
  const int w = op(Kind::kFaultCopy, j, {});
  const int x = op(Kind::kExpand, w, {2, 2, 3});
  const int y = op(Kind::kContiguous, x, {});
  const int z = op(Kind::kExpandBackward, y, {}, {2, 1, 3});
  op(Kind::kDrop, w, {});
  op(Kind::kDrop, x, {});
  const int kk = op(Kind::kFaultCopy, k, {});
  const int k2 = op(Kind::kRepeat, kk, {1, 2});    // (2,6)
  const int ip = op(Kind::kNarrow, i, {0, 2, 3});  // (3,2,2)
  const int ir = op(Kind::kReshape, ip, {-1});
  op(Kind::kRead, ir, {});
  const int zz = op(Kind::kRepeat, z, {2, 1, 1});  // (4,1,3)
  const int zb = op(Kind::kRepeatBackward, zz, {2, 1, 1}, {2, 1, 3});
  const int vv = op(Kind::kExpand, v, {2, 4, 3});
  const int vc = op(Kind::kReshape, vv, {8, 3});  // a copy: the expanded view has stride 0
  op(Kind::kDrop, vv, {});
  const int sum = op(Kind::kExpandBackward, vc, {}, {1, 3});
  (void)pb, (void)k2, (void)zb, (void)sum, (void)a, (void)g;
  return p;
}

// Host values of a kHost step: small integers, so every sum is exact in float.
std::vector<float> HostValues(int step, int64_t numel) {
  std::vector<float> v;
  for (int64_t i = 0; i < numel; ++i) v.push_back(static_cast<float>((step * 7 + i * 3) % 11 - 5));
  return v;
}

std::vector<Ref> RunReference(const std::vector<Step>& p) {
  std::vector<Ref> refs(p.size());
  for (size_t id = 0; id < p.size(); ++id) {
    const Step& s = p[id];
    const Ref* x = s.in >= 0 ? &refs[s.in] : nullptr;
    switch (s.kind) {
      case Kind::kHost:
        refs[id] = {s.ints, HostValues(static_cast<int>(id), Numel(s.ints))};
        break;
      case Kind::kExpand:
        refs[id] = RefExpand(*x, s.ints);
        break;
      case Kind::kContiguous:
      case Kind::kFaultCopy:
        refs[id] = *x;
        break;
      case Kind::kRepeat:
        refs[id] = RefRepeat(*x, s.ints);
        break;
      case Kind::kPermute:
        refs[id] = RefPermute(*x, s.ints);
        break;
      case Kind::kNarrow:
        refs[id] = RefNarrow(*x, s.ints[0], s.ints[1], s.ints[2]);
        break;
      case Kind::kReshape: {
        refs[id] = *x;
        std::vector<int64_t> shape = s.ints;
        for (int64_t& d : shape) {
          if (d == -1) d = Numel(x->shape) / -Numel(s.ints);
        }
        refs[id].shape = shape;
        break;
      }
      case Kind::kExpandBackward:
        refs[id] = RefSumBack(*x, s.ints2, false);
        break;
      case Kind::kRepeatBackward:
        refs[id] = RefSumBack(*x, s.ints2, true);
        break;
      case Kind::kRead:
      case Kind::kDrop:
        break;
    }
  }
  return refs;
}

// What one run of the program observed.
struct Outcome {
  std::vector<Tensor> tensors;           // per step (undefined: not a tensor, dropped or lost)
  std::vector<bool> lost;                // the call threw or an input was lost (sync mode)
  std::vector<std::string> call_errors;  // per step, what its call threw
  std::vector<std::string> call_types;
  struct Read {
    int step = -1;
    bool threw = false;
    std::string type;
    std::string message;
    std::vector<float> values;
  };
  std::vector<Read> reads;
  std::vector<int64_t> allocs_per_step;  // filled when measuring
};

std::string TypeOf(const std::exception& e) {
  if (dynamic_cast<const OutOfMemory*>(&e)) return "OutOfMemory";
  if (dynamic_cast<const DeviceError*>(&e)) return "DeviceError";
  if (dynamic_cast<const InvalidArgument*>(&e)) return "InvalidArgument";
  if (dynamic_cast<const Error*>(&e)) return "Error";
  return "std::exception";
}

Outcome::Read ReadBack(int step, const Tensor& t) {
  Outcome::Read r;
  r.step = step;
  try {
    r.values = t.to_vector<float>();
  } catch (const std::exception& e) {
    r.threw = true;
    r.type = TypeOf(e);
    r.message = e.what();
  }
  return r;
}

Tensor Issue(const Step& s, int id, const Tensor& x) {
  switch (s.kind) {
    case Kind::kHost:
      return tensor<float>(HostValues(id, Numel(s.ints)), Shape(s.ints), Device("cpu"));
    case Kind::kExpand:
      return x.expand(s.ints);
    case Kind::kContiguous:
      return x.contiguous();
    case Kind::kRepeat:
      return x.repeat(s.ints);
    case Kind::kPermute:
      return x.permute(s.ints);
    case Kind::kNarrow:
      return x.narrow(s.ints[0], s.ints[1], s.ints[2]);
    case Kind::kReshape:
      return x.reshape(s.ints);
    case Kind::kExpandBackward:
      return expand_backward(x, Shape(s.ints2));
    case Kind::kRepeatBackward:
      return repeat_backward(x, Shape(s.ints2), s.ints);
    case Kind::kFaultCopy: {
      Tensor out = functional::NewTensor(x.shape(), x.dtype(), x.device());
      vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
        b->OpCall("fault_test_copy", FaultKernel(), {x.impl()->arg()}, {out.impl()->arg()});
      });
      return out;
    }
    default:
      return Tensor();
  }
}

// Runs the program; every tensor still alive is read back at the end. With `measure`, syncs after
// each step to count its allocation requests.
Outcome RunProgram(const std::vector<Step>& p, bool measure) {
  Outcome out;
  out.tensors.resize(p.size());
  out.lost.assign(p.size(), false);
  out.call_errors.resize(p.size());
  out.call_types.resize(p.size());
  vm::CachingAllocator* pool = vm::VirtualMachine::Get().devices().GetAllocator(Device("cpu"));
  for (size_t id = 0; id < p.size(); ++id) {
    const Step& s = p[id];
    const int64_t before = measure ? pool->stats().alloc_requests : 0;
    if (s.kind == Kind::kRead) {
      if (!out.lost[s.in]) out.reads.push_back(ReadBack(s.in, out.tensors[s.in]));
    } else if (s.kind == Kind::kDrop) {
      out.tensors[s.in] = Tensor();
    } else if (s.in >= 0 && out.lost[s.in]) {
      out.lost[id] = true;
    } else {
      try {
        out.tensors[id] = Issue(s, static_cast<int>(id), s.in >= 0 ? out.tensors[s.in] : Tensor());
      } catch (const std::exception& e) {
        out.lost[id] = true;
        out.call_errors[id] = e.what();
        out.call_types[id] = TypeOf(e);
      }
    }
    if (measure) {
      sync();
      out.allocs_per_step.push_back(pool->stats().alloc_requests - before);
    }
  }
  for (size_t id = 0; id < p.size(); ++id) {
    if (out.tensors[id].defined())
      out.reads.push_back(ReadBack(static_cast<int>(id), out.tensors[id]));
  }
  return out;
}

// Steps computed (through any chain of inputs) from step `failed`, including it.
std::vector<bool> Dependents(const std::vector<Step>& p, int failed) {
  std::vector<bool> dep(p.size(), false);
  dep[failed] = true;
  for (size_t id = failed + 1; id < p.size(); ++id) {
    const Step& s = p[id];
    if (s.kind != Kind::kRead && s.kind != Kind::kDrop && s.in >= 0 && dep[s.in]) dep[id] = true;
  }
  return dep;
}

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FaultKernel();
    sync();
    pool_ = vm::VirtualMachine::Get().devices().GetAllocator(Device("cpu"));
    pool_->SetFailAt(0);
    g_kernel_fail_countdown = 0;
    program_ = MakeProgram();
    reference_ = RunReference(program_);
  }
  void TearDown() override {
    pool_->SetFailAt(0);
    g_kernel_fail_countdown = 0;
  }

  // Reads of a fault-free run equal the reference.
  void ExpectMatchesReference(const Outcome& run, const std::string& when) {
    for (const Outcome::Read& r : run.reads) {
      ASSERT_FALSE(r.threw) << when << ": step " << r.step << " threw " << r.message;
      EXPECT_EQ(r.values, reference_[r.step].v) << when << ": step " << r.step;
    }
  }

  // One faulty run whose failing step is `failed` (an op named `op`), expecting `type` with
  // `cause` in the message.
  void CheckFaultyRun(const Outcome& run, int failed, const std::string& type,
                      const std::string& cause, const std::string& when) {
    const std::vector<bool> dep = Dependents(program_, failed);
    const std::string op = OpName(program_[failed].kind);
    auto names_failure = [&](const std::string& t, const std::string& msg) {
      EXPECT_EQ(t, type) << when << ": " << msg;
      EXPECT_NE(msg.find(op + " (instruction #"), std::string::npos) << when << ": " << msg;
      EXPECT_NE(msg.find(cause), std::string::npos) << when << ": " << msg;
    };
    bool reported = false;
    for (size_t id = 0; id < program_.size(); ++id) {
      if (run.call_errors[id].empty()) continue;
      // Only OFL_VM_SYNC=1 throws at the call, and only for the failed op and what depends on it.
      EXPECT_TRUE(sync_mode_) << when << ": step " << id
                              << " threw at the call in async mode: " << run.call_errors[id];
      EXPECT_TRUE(dep[id]) << when << ": independent step " << id
                           << " threw: " << run.call_errors[id];
      names_failure(run.call_types[id], run.call_errors[id]);
      reported = true;
    }
    if (sync_mode_) {
      EXPECT_FALSE(run.call_errors[failed].empty()) << when << ": the failed call did not throw";
    }
    for (const Outcome::Read& r : run.reads) {
      if (dep[r.step]) {
        EXPECT_TRUE(r.threw) << when << ": step " << r.step << " depends on the failure but read";
        if (r.threw) names_failure(r.type, r.message);
        reported = true;
      } else {
        EXPECT_FALSE(r.threw) << when << ": independent step " << r.step << " threw " << r.message;
        EXPECT_EQ(r.values, reference_[r.step].v) << when << ": independent step " << r.step;
      }
    }
    // Every tensor dies; sync waits for their releases and reports the error only if no wait did.
    std::string sync_error;
    try {
      sync();
    } catch (const std::exception& e) {
      sync_error = e.what();
    }
    if (reported) {
      EXPECT_EQ(sync_error, "") << when << ": an error already reported came back from sync()";
    } else {
      EXPECT_NE(sync_error.find(op), std::string::npos)
          << when << ": sync() did not report the unread error: " << sync_error;
    }
  }

  // Runs the program with a fault armed by `arm`, checks it, then checks that nothing leaked and
  // that the next run is normal.
  void SweepOne(const std::function<void()>& arm, int failed, const std::string& type,
                const std::string& cause, const std::string& when) {
    const int64_t allocated_before = pool_->stats().allocated_bytes;
    arm();
    {
      Outcome run = RunProgram(program_, false);
      CheckFaultyRun(run, failed, type, cause, when);
    }  // every tensor dies here
    EXPECT_NO_THROW(sync()) << when;
    EXPECT_EQ(pool_->fail_at(), 0) << when << ": the armed allocation fault never fired";
    EXPECT_EQ(g_kernel_fail_countdown.load(), 0) << when << ": the kernel fault never fired";
    EXPECT_EQ(pool_->stats().allocated_bytes, allocated_before) << when << ": bytes leaked";
    {
      Outcome again = RunProgram(program_, false);
      ExpectMatchesReference(again, when + ", the next run");
    }
    sync();
    EXPECT_EQ(pool_->stats().allocated_bytes, allocated_before) << when << ": next run leaked";
  }

  vm::CachingAllocator* pool_ = nullptr;
  std::vector<Step> program_;
  std::vector<Ref> reference_;
  bool sync_mode_ = vm::VirtualMachine::Get().sync_mode();
};

TEST(AllocatorFailAtTest, OnlyTheNthRequestFailsAndZeroTurnsItOff) {
  vm::CachingAllocator pool(Device("cpu"), std::make_unique<vm::CpuAllocatorBackend>());
  pool.SetFailAt(3);
  EXPECT_EQ(pool.fail_at(), 3);
  vm::CachingAllocator::Block* a = pool.Allocate(100);
  vm::CachingAllocator::Block* b = pool.Allocate(100);
  try {
    pool.Allocate(100);
    ADD_FAILURE() << "the third request did not fail";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("tried to allocate 100 bytes"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("(injected fault)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pool.fail_at(), 0);
  vm::CachingAllocator::Block* c = pool.Allocate(100);  // the hook fired once and is off again
  EXPECT_EQ(pool.stats().ooms, 1);
  EXPECT_EQ(pool.stats().allocated_bytes, 3 * 128);  // 100 bytes take a 128-byte class
  pool.SetFailAt(2);
  pool.SetFailAt(0);
  vm::CachingAllocator::Block* d = pool.Allocate(100);
  vm::CachingAllocator::Block* e = pool.Allocate(100);
  EXPECT_EQ(pool.stats().ooms, 1);
  EXPECT_THROW(pool.SetFailAt(-1), InvalidArgument);
  for (auto* blk : {a, b, c, d, e}) pool.Free(blk);
  EXPECT_EQ(pool.stats().allocated_bytes, 0);
}

TEST_F(FaultInjectionTest, FaultFreeRunMatchesThePlainReference) {
  const int64_t before = pool_->stats().allocated_bytes;
  {
    Outcome run = RunProgram(program_, false);
    ASSERT_GE(run.reads.size(), 15u);
    ExpectMatchesReference(run, "fault-free run");
  }
  sync();
  EXPECT_EQ(pool_->stats().allocated_bytes, before);
}

TEST_F(FaultInjectionTest, EveryAllocationAndEveryLaunchCanFailWithoutLosingAnything) {
  // Which step makes each allocation request and each fault-kernel launch.
  std::vector<int> alloc_step, launch_step;
  {
    const int64_t launches_before = g_kernel_launches.load();
    Outcome measured = RunProgram(program_, true);
    ExpectMatchesReference(measured, "measured run");
    for (size_t id = 0; id < program_.size(); ++id) {
      // Reads and drops allocate nothing; every allocating step makes exactly one request.
      ASSERT_LE(measured.allocs_per_step[id], 1) << "step " << id;
      if (measured.allocs_per_step[id] == 1) alloc_step.push_back(static_cast<int>(id));
      if (program_[id].kind == Kind::kFaultCopy) launch_step.push_back(static_cast<int>(id));
    }
    sync();
    ASSERT_EQ(g_kernel_launches.load() - launches_before, static_cast<int64_t>(launch_step.size()));
  }
  ASSERT_GE(alloc_step.size(), 20u);

  // Every injected fault would log an error line; the sweep checks them instead.
  const spdlog::level::level_enum log_level = vm::Logger().level();
  vm::Logger().set_level(spdlog::level::off);
  ScopeGuard restore_log([log_level] { vm::Logger().set_level(log_level); });

  int64_t injected = 0;
  const int64_t ooms_before = pool_->stats().ooms;
  for (size_t n = 1; n <= alloc_step.size(); ++n) {
    const std::string when = "allocation fault N=" + std::to_string(n);
    SweepOne([&] { pool_->SetFailAt(static_cast<int64_t>(n)); }, alloc_step[n - 1], "OutOfMemory",
             "(injected fault)", when);
    ++injected;
    if (HasFatalFailure() || HasFailure()) break;
  }
  EXPECT_EQ(pool_->stats().ooms - ooms_before, injected);
  for (size_t n = 1; n <= launch_step.size() && !HasFailure(); ++n) {
    const std::string when = "kernel fault N=" + std::to_string(n);
    SweepOne([&] { g_kernel_fail_countdown = static_cast<int64_t>(n); }, launch_step[n - 1],
             "DeviceError", "injected kernel fault", when);
    ++injected;
  }
  if (!HasFailure()) {
    std::printf(
        "[ fault sweep ] %zu allocation faults + %zu kernel faults injected, %lld survived "
        "(program of %zu steps)\n",
        alloc_step.size(), launch_step.size(), static_cast<long long>(injected), program_.size());
  }
}

}  // namespace
}  // namespace ofl
