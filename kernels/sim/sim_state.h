// The simulator's state behind SimBackend (sim_backend.h), shared by the files that implement it:
// sim_backend.cpp (construction, checks, streams, events, faults) and sim_memory.cpp (the memfd
// arena and copies). Private to kernels/sim.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include "kernels/sim/sim_backend.h"

namespace ofl::kernels::sim {

namespace detail {

// Every allocation starts and ends on this boundary, as cudaMalloc's do (at least).
constexpr size_t kAlignment = 256;
constexpr unsigned char kPoison = 0xFB;

inline size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

inline std::string Name(int index) { return "sim:" + std::to_string(index); }

inline std::string PtrStr(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

inline const char* KindName(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice:
      return "HostToDevice";
    case CopyKind::kDeviceToHost:
      return "DeviceToHost";
    case CopyKind::kDeviceToDevice:
      return "DeviceToDevice";
  }
  return "unknown CopyKind";
}

}  // namespace detail

// ---- State -----------------------------------------------------------------------------------

struct SimBackend::DeviceState {
  struct Allocation {
    size_t size;       // rounded to kAlignment: what the free list gets back
    size_t requested;  // what allocate() was asked for: deallocate must say the same
  };

  int index = 0;
  size_t capacity = 0;

  // The arena, mapped twice: device_view (no access) is what allocate() hands out, so the host
  // faults on touching device memory as it would on a GPU's; worker_view (read-write) is what the
  // sim's streams run kernels and copies through. Both are set once under `mu`; device_view is
  // published last (release), so a reader that sees it non-null (acquire) also sees worker_view.
  std::mutex mu;
  std::atomic<char*> device_view{nullptr};
  char* worker_view = nullptr;
  int fd = -1;
  std::map<size_t, size_t> free_blocks;  // offset -> size, disjoint, never adjacent (coalesced)
  std::map<size_t, Allocation> live;     // offset -> block handed out by allocate()

  // Faults.
  std::mutex fault_mu;
  bool failed = false;
  std::string first_fault;  // why the device failed
  int64_t query_countdown = 0;
  bool query_sticky = false;
  // The first exception a stream task threw whose stream recorded no event after it (a stream's
  // later event carries its faults instead: SimStream::async_error), until a query reports it.
  std::string async_error;
};

struct SimBackend::SimStream {
  struct Task {
    std::function<void()> fn;
    bool delayed = true;  // event markers are not: they add nothing a delay before the work lacks
  };

  int device = 0;
  uint64_t id = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Task> queue;
  bool stopping = false;
  std::mt19937_64 rng;  // the worker's alone
  std::thread thread;
  // The first exception a task threw since the last event marker ran (under mu): the next marker
  // moves it into its event, so the query of that event, the one that covers the failed work,
  // reports it (as a GPU reports a failed kernel at the query of an event recorded after it).
  std::string async_error;
};

struct SimBackend::SimEvent {
  int device = 0;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t last = 0;  // generation of the latest record; 0: never recorded (complete)
  // Generations recorded whose marker has not run yet. A set, not a counter: a re-record on
  // another stream may finish before the earlier one, and a stream_wait_event must still wait for
  // the generation it captured.
  std::set<uint64_t> pending;
  // Faults the markers brought from their streams, by generation: a query or synchronize that
  // sees a generation complete reports (and drops) the faults of it and of earlier ones.
  std::map<uint64_t, std::string> faults;
};

// Live handles: a handle not found here (destroyed, or never ours) is rejected, not dereferenced.
struct SimBackend::Registry {
  std::mutex mu;
  std::unordered_map<void*, std::shared_ptr<SimStream>> streams;
  std::unordered_map<void*, std::shared_ptr<SimEvent>> events;
  uint64_t next_stream_id = 0;
};
}  // namespace ofl::kernels::sim
