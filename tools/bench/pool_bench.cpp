// ofl_bench_pool: one cached Allocate + Free through vm::CachingAllocator (a single warm instance
// over the CPU backend's memory, used directly, no VM) against malloc + free of the same size:
// "malloc" is whatever malloc the process resolves (the JSON context's "malloc" names it:
// libmimalloc when it comes in with oneflow_lite), "glibc_malloc" calls glibc's allocator directly.
// Each writes one byte of the block so that no call can be optimised away; where an allocator maps
// big blocks fresh every time (glibc above its mmap threshold) that byte also costs a page fault,
// which is exactly what a pool saves.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "kernels/device_backend.h"
#include "tools/bench/bench_util.h"
#include "vm/allocator/caching_allocator.h"

// glibc's own entry points, whichever malloc the process's symbol lookup resolves.
extern "C" void* __libc_malloc(size_t bytes);
extern "C" void __libc_free(void* ptr);

namespace {

using ofl::vm::CachingAllocator;
using ofl_bench::LoopClock;
using ofl_bench::ReportNsPerOp;

ofl::vm::CachingAllocator& Pool() {
  static CachingAllocator* pool = new CachingAllocator(
      ofl::Device("cpu"), std::make_unique<ofl::vm::DeviceMemoryBackend>(
                              ofl::kernels::GetBackend(ofl::DeviceType::kCPU), 0));
  return *pool;
}

void Cached(benchmark::State& state, size_t bytes) {
  CachingAllocator& pool = Pool();
  pool.Free(pool.Allocate(bytes));  // warm: the segment exists and the block is cached
  bool hit = true;
  LoopClock clock;
  for (auto _ : state) {
    CachingAllocator::Block* b = pool.Allocate(bytes, &hit);
    char* p = static_cast<char*>(CachingAllocator::Data(b));
    *p = 1;
    benchmark::DoNotOptimize(p);
    pool.Free(b);
  }
  ReportNsPerOp(state, clock, 1);
  if (!hit) state.SkipWithError("the pool missed its cache after warming up");
}

template <void* (*kMalloc)(size_t), void (*kFree)(void*)>
void Malloc(benchmark::State& state, size_t bytes) {
  LoopClock clock;
  for (auto _ : state) {
    char* p = static_cast<char*>(kMalloc(bytes));
    *p = 1;
    benchmark::DoNotOptimize(p);
    kFree(p);
  }
  ReportNsPerOp(state, clock, 1);
}

void* ProcessMalloc(size_t bytes) { return std::malloc(bytes); }
void ProcessFree(void* p) { std::free(p); }

}  // namespace

int main(int argc, char** argv) {
  struct Size {
    const char* label;
    size_t bytes;
  };
  static const Size kSizes[] = {
      {"4KiB", size_t{4} << 10},
      {"256KiB", size_t{256} << 10},
      {"4MiB", size_t{4} << 20},
      {"64MiB", size_t{64} << 20},
  };
  for (const Size& s : kSizes) {
    const size_t bytes = s.bytes;
    const std::string name = std::string("pool_alloc_free_") + s.label;
    ofl_bench::Register(name + "/ofl", [bytes](benchmark::State& st) { Cached(st, bytes); });
    ofl_bench::Register(name + "/malloc", [bytes](benchmark::State& st) {
      Malloc<ProcessMalloc, ProcessFree>(st, bytes);
    });
    ofl_bench::Register(name + "/glibc_malloc", [bytes](benchmark::State& st) {
      Malloc<__libc_malloc, __libc_free>(st, bytes);
    });
  }
  return ofl_bench::RunMain(argc, argv,
                            "pool: ns_per_op is one Allocate+Free pair (ofl: vm::CachingAllocator "
                            "directly, warm) or malloc+free (the process's malloc, then glibc's), "
                            "each writing one byte");
}
