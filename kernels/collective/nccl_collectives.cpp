// NCCL collectives (nccl_collectives.h). A one-rank placement goes through NCCL too (a one-rank
// communicator), so one GPU exercises every code path.
//
// Communicators are cached per (rank list, device) and used on the collective stream's worker of
// that device only. Each collective:
// 1. claims its key (`in_use`, under the cache's mutex): the VM has one collective stream, so one
//    worker, per device (VirtualMachine::GetStream), and only that worker runs this device's
//    collectives (CollectivePolicy never runs inline or directly), so a second claimant is a
//    broken invariant and throws instead of sharing a communicator NCCL does not let two threads
//    use at once;
// 2. agrees with the other members on the communicator (AgreeOnCommunicator, nccl_wait.h): each
//    passes the generation it holds, or -1 after it dropped its own (an abort, or an asynchronous
//    error found before the call); any difference makes every member build a new one together;
// 3. builds it when needed: the list's first rank makes the unique id and it travels to the
//    others, then every member joins with the blocking ncclCommInitRank;
// 4. records an event ("started"), enqueues the NCCL call, records another ("done"), and waits
//    for "done" while polling ncclCommGetAsyncError (WaitCollective, nccl_wait.h). On an error or
//    the hang timeout it aborts the communicator and drops it from the cache.
// The agreement and the unique id go over MPI on the channel of the device's collective stream
// (coll::GatherStatus with channel 1 + device index, the one the collective policy,
// oneflow_lite/functional/collective_policy.cpp, uses for its status agreement): only this worker
// calls MPI there, in the same order on every rank. (Channel
// 0, which coll::Broadcast uses, is the host collective stream's: a second thread's collective on
// it could pair with a different one on another rank.)
// Which error each failure raises, and what happens to the communicator: nccl_collectives.h.
// No lock is held across a blocking call: the cache's mutex guards only lookups, inserts, erases
// and claims; the MPI exchanges, ncclCommInitRank, ncclCommAbort, ncclCommDestroy and the wait run
// outside it.
#include "kernels/collective/nccl_collectives.h"

#include <string>
#include <utility>

#include "oneflow_lite/error.h"

#ifdef OFL_WITH_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <map>
#include <mutex>
#include <set>

#include "kernels/collective/collectives.h"
#include "kernels/collective/nccl_wait.h"
#include "kernels/collective/rank_list.h"
#include "kernels/cuda/cuda_check.h"
#endif

namespace ofl::kernels::collective {

namespace {
// The scope of the collective instruction this thread runs (nccl_collectives.h).
thread_local NcclCollectiveScope* current_scope = nullptr;
}  // namespace

NcclCollectiveScope::NcclCollectiveScope(std::string op_name_in, CollectiveId id_in,
                                         double timeout_s_in)
    : op_name(std::move(op_name_in)),
      id(std::move(id_in)),
      timeout_s(timeout_s_in),
      previous_(current_scope) {
  current_scope = this;
}

NcclCollectiveScope::~NcclCollectiveScope() { current_scope = previous_; }

#ifdef OFL_WITH_NCCL
namespace {

// nccl_wait.h works on these values without nccl.h.
static_assert(ncclSuccess == nccl_result::kSuccess &&
                  ncclUnhandledCudaError == nccl_result::kUnhandledCudaError &&
                  ncclSystemError == nccl_result::kSystemError &&
                  ncclInternalError == nccl_result::kInternalError &&
                  ncclInvalidArgument == nccl_result::kInvalidArgument &&
                  ncclInvalidUsage == nccl_result::kInvalidUsage &&
                  ncclRemoteError == nccl_result::kRemoteError &&
                  ncclInProgress == nccl_result::kInProgress,
              "nccl_wait.h's ncclResult_t values differ from nccl.h's");

using Key = std::pair<std::vector<int>, int>;  // (rank list, device index)

struct CommEntry {
  ncclComm_t comm = nullptr;
  int generation = 0;
  cudaEvent_t started = nullptr;  // recorded before each collective on it
  cudaEvent_t done = nullptr;     // and after
};

struct Comms {
  std::mutex mu;  // everything below; never held across a call that can block
  std::map<Key, CommEntry> by_key;
  std::set<Key> in_use;  // keys a thread runs a collective over right now
};

Comms& GetComms() {
  static Comms* c = new Comms();  // never destroyed: FinalizeNccl frees the communicators
  return *c;
}

std::string Where(const char* name, const std::vector<int>& ranks, int device) {
  return std::string(name) + " over ranks " + Join(ranks) + " on cuda:" + std::to_string(device);
}

// The MPI channel of the GPUs' collective streams: CollectiveChannel of cuda (every GPU's, so that
// ranks on GPUs of different indices meet on one communicator).
int Channel(int /*device*/) { return CollectiveChannel(DeviceType::kCUDA); }

int IndexOf(const std::vector<int>& ranks, const std::string& where) {
  const int me = WorldRank();
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == me) return static_cast<int>(i);
  }
  throw InvalidArgument(where + ": this process (rank " + std::to_string(me) +
                        ") is not in the placement");
}

// Frees what an entry holds. `abort`: ncclCommAbort (a communicator that failed or that the
// other members dropped), else ncclCommDestroy. Errors are ignored: nothing more can be done
// with it, and the error being reported, if any, is the caller's.
void Release(const CommEntry& e, bool abort) {
  if (e.comm != nullptr) (void)(abort ? ncclCommAbort(e.comm) : ncclCommDestroy(e.comm));
  for (cudaEvent_t event : {e.started, e.done}) {
    if (event == nullptr) continue;
    const cudaError_t rc = cudaEventDestroy(event);
    // Not for the next call to report; another pending error stays (cuda_check.h).
    if (rc != cudaSuccess) cuda::ClearLastErrorIf(rc);
  }
}

// One NCCL collective over (ranks, device) on the calling thread: see the top of this file.
class Collective {
 public:
  Collective(const char* name, const std::vector<int>& ranks, int device, void* stream)
      : ranks_(ranks), device_(device), stream_(static_cast<cudaStream_t>(stream)) {
    const std::string base = Where(name, ranks, device);
    me_ = IndexOf(ranks, base);
    where_ = base + ", rank " + std::to_string(WorldRank());
    if (current_scope != nullptr) {
      where_ += ", in " + current_scope->op_name + " (" + current_scope->id.fingerprint + ")";
    }
  }
  ~Collective() {
    if (!claimed_) return;
    Comms& c = GetComms();
    std::lock_guard<std::mutex> lock(c.mu);
    c.in_use.erase(Key{ranks_, device_});
  }
  Collective(const Collective&) = delete;
  Collective& operator=(const Collective&) = delete;

  const std::string& where() const { return where_; }
  int me() const { return me_; }
  ncclComm_t comm() const { return entry_.comm; }

  // Claims the key, agrees on the communicator (building it when needed) and records "started".
  void Begin() {
    Claim();
    Comms& c = GetComms();
    {
      std::lock_guard<std::mutex> lock(c.mu);
      const auto it = c.by_key.find(Key{ranks_, device_});
      if (it != c.by_key.end()) entry_ = it->second;
    }
    // An error that arrived after the last collective on it completed: the communicator is
    // unusable, and the agreement below makes every member rebuild.
    if (entry_.comm != nullptr) {
      ncclResult_t async = ncclSuccess;
      const ncclResult_t rc = ncclCommGetAsyncError(entry_.comm, &async);
      if (rc != ncclSuccess || (async != ncclSuccess && async != ncclInProgress)) Drop();
    }
    const int mine = entry_.comm != nullptr ? entry_.generation : -1;
    const CommDecision d = AgreeOnCommunicator(GatherStatus(mine, ranks_, Channel(device_)));
    if (!d.reuse) {
      if (entry_.comm != nullptr) Drop();  // the others dropped theirs
      Build(d.generation);
    }
    cuda::Check(cudaEventRecord(entry_.started, stream_), "cudaEventRecord", where_);
  }

  // Checks an NCCL call's result (nccl_wait.h: CheckNcclResult).
  void Check(ncclResult_t rc, const char* call) {
    CheckNcclResult(rc, where_ + ": " + call, Hooks());
  }

  // Records "done" and waits for it (nccl_wait.h: WaitCollective).
  void Finish() {
    cuda::Check(cudaEventRecord(entry_.done, stream_), "cudaEventRecord", where_);
    NcclWait w;
    w.where = where_;
    w.timeout_s = current_scope != nullptr ? current_scope->timeout_s : 0;
    w.started = [this] { return Query(entry_.started); };
    w.done = [this] { return Query(entry_.done); };
    w.async_error = [this] {
      ncclResult_t async = ncclSuccess;
      const ncclResult_t rc = ncclCommGetAsyncError(entry_.comm, &async);
      return static_cast<int>(rc != ncclSuccess ? rc : async);
    };
    if (current_scope != nullptr) {
      const CollectiveId id = current_scope->id;
      w.detail = [id] { return WatchdogStatus(id); };
    }
    w.failure = Hooks();
    WaitCollective(w);
  }

 private:
  void Claim() {
    Comms& c = GetComms();
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.in_use.insert(Key{ranks_, device_}).second) {
      throw Error(where_ +
                  ": another thread runs an NCCL collective over the same ranks and device; "
                  "only the device's collective stream may run them, one at a time");
    }
    claimed_ = true;
  }

  NcclFailureHooks Hooks() {
    NcclFailureHooks h;
    h.describe = [this](int rc) {
      std::string s = ncclGetErrorString(static_cast<ncclResult_t>(rc));
      if (entry_.comm != nullptr) {
        const char* last = ncclGetLastError(entry_.comm);
        if (last != nullptr && *last != '\0') s += " (" + std::string(last) + ")";
      }
      return s;
    };
    h.cuda_context_lost = [this] {
      cudaError_t e = cudaPeekAtLastError();
      if (e == cudaSuccess) e = cudaStreamQuery(stream_);
      return cuda::IsSticky(e);
    };
    h.abort = [this] { Drop(); };
    return h;
  }

  bool Query(cudaEvent_t e) {
    const cudaError_t rc = cudaEventQuery(e);
    if (rc == cudaSuccess) return true;
    if (rc == cudaErrorNotReady) {
      cuda::ClearLastErrorIf(rc);  // should the runtime have recorded it
      return false;
    }
    cuda::ThrowCudaError(rc, "cudaEventQuery", where_);
  }

  // Aborts this thread's communicator and drops it from the cache (the erase under the mutex,
  // the abort outside it).
  void Drop() {
    if (entry_.comm == nullptr) return;
    const CommEntry gone = entry_;
    entry_ = CommEntry{};
    {
      Comms& c = GetComms();
      std::lock_guard<std::mutex> lock(c.mu);
      const auto it = c.by_key.find(Key{ranks_, device_});
      if (it != c.by_key.end() && it->second.comm == gone.comm) c.by_key.erase(it);
    }
    Release(gone, /*abort=*/true);
  }

  // Every member together: the unique id from the list's first rank, then ncclCommInitRank.
  void Build(int generation) {
    const auto gather = [this](int v) { return GatherStatus(v, ranks_, Channel(device_)); };
    ncclUniqueId id{};
    // The first rank's result first, so that a failure there ends the build on every member
    // instead of leaving them waiting for an id.
    const ncclResult_t made = me_ == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
    const int root_rc = gather(static_cast<int>(made))[0];
    if (root_rc != ncclSuccess) {
      CheckNcclResult(root_rc,
                      where_ + ": ncclGetUniqueId on rank " + std::to_string(ranks_[0]) +
                          " (so no member could build the communicator)",
                      Hooks());
    }
    BroadcastBytesByGather(&id, sizeof(id), me_, gather);
    cuda::Check(cudaSetDevice(device_), "cudaSetDevice", where_);
    CommEntry e;
    e.generation = generation;
    const ncclResult_t rc = ncclCommInitRank(&e.comm, static_cast<int>(ranks_.size()), id, me_);
    if (rc != ncclSuccess) {
      const char* last_error = ncclGetLastError(nullptr);  // NCCL allows a null communicator
      const std::string last = last_error != nullptr ? last_error : "";
      Release(e, /*abort=*/true);
      ThrowNcclError(ClassifyNcclResult(rc) == NcclErrorKind::kInvalidArgument
                         ? NcclErrorKind::kInvalidArgument
                         : NcclErrorKind::kCommunicatorLost,
                     false,
                     where_ + ": ncclCommInitRank failed: " + ncclGetErrorString(rc) +
                         (last.empty() ? "" : " (" + last + ")"));
    }
    cudaError_t ev = cudaEventCreateWithFlags(&e.started, cudaEventDisableTiming);
    if (ev == cudaSuccess) ev = cudaEventCreateWithFlags(&e.done, cudaEventDisableTiming);
    if (ev != cudaSuccess) {
      Release(e, /*abort=*/true);
      cuda::ThrowCudaError(ev, "cudaEventCreateWithFlags", where_);
    }
    entry_ = e;
    Comms& c = GetComms();
    std::lock_guard<std::mutex> lock(c.mu);
    c.by_key[Key{ranks_, device_}] = e;
  }

  std::vector<int> ranks_;
  int device_;
  cudaStream_t stream_;
  int me_ = 0;
  std::string where_;
  bool claimed_ = false;
  CommEntry entry_;  // this collective's communicator, once Begin agreed on it
};

// The element type NCCL sums `dtype` in, and the operation (bool: max of 0/1).
std::pair<ncclDataType_t, ncclRedOp_t> SumType(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return {ncclUint8, ncclMax};
    case DType::kUInt8:
      return {ncclUint8, ncclSum};
    case DType::kInt8:
      return {ncclInt8, ncclSum};
    case DType::kInt32:
      return {ncclInt32, ncclSum};
    case DType::kInt64:
      return {ncclInt64, ncclSum};
    case DType::kFloat16:
      return {ncclFloat16, ncclSum};
    case DType::kBFloat16:
      return {ncclBfloat16, ncclSum};
    case DType::kFloat32:
      return {ncclFloat32, ncclSum};
    case DType::kFloat64:
      return {ncclFloat64, ncclSum};
    default:
      break;
  }
  throw InvalidArgument("NCCL has no " + to_string(dtype) + " sum");
}

size_t Bytes(int64_t count, DType dtype) {
  return static_cast<size_t>(count) * element_size(dtype);
}

bool AllEqual(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x != v[0]) return false;
  }
  return true;
}

void CheckCounts(const std::vector<int64_t>& counts, const std::vector<int>& ranks,
                 const std::string& where) {
  if (counts.size() != ranks.size()) {
    throw InvalidArgument(where + ": " + std::to_string(counts.size()) + " counts for " +
                          std::to_string(ranks.size()) + " rank(s)");
  }
  for (int64_t c : counts) {
    if (c < 0) throw InvalidArgument(where + ": negative count " + std::to_string(c));
  }
}

}  // namespace

bool BuiltWithNccl() { return true; }

void NcclCheckSum(const char* op, DType dtype) {
  if (dtype == DType::kInt16) {
    throw InvalidArgument(std::string(op) +
                          ": NCCL has no int16 type, so an int16 tensor on a cuda placement "
                          "cannot be summed across ranks; convert it to int32 first");
  }
}

void NcclAllGatherV(const void* send, int64_t send_count, void* recv,
                    const std::vector<int64_t>& counts, DType dtype, const std::vector<int>& ranks,
                    int device, void* stream) {
  Collective c("NcclAllGatherV", ranks, device, stream);
  CheckCounts(counts, ranks, c.where());
  const int me = c.me();
  if (send_count != counts[me]) {
    throw InvalidArgument(c.where() + ": send_count " + std::to_string(send_count) +
                          " differs from counts[" + std::to_string(me) +
                          "] = " + std::to_string(counts[me]));
  }
  const auto s = static_cast<cudaStream_t>(stream);
  auto* out = static_cast<char*>(recv);
  c.Begin();
  if (AllEqual(counts)) {
    c.Check(ncclAllGather(send, recv, Bytes(counts[0], dtype), ncclUint8, c.comm(), s),
            "ncclAllGather");
    c.Finish();
    return;
  }
  // Uneven: each rank broadcasts its piece into its place; no padding moves.
  c.Check(ncclGroupStart(), "ncclGroupStart");
  size_t at = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const void* src = static_cast<int>(r) == me ? send : out + at;
    const ncclResult_t rc = ncclBroadcast(src, out + at, Bytes(counts[r], dtype), ncclUint8,
                                          static_cast<int>(r), c.comm(), s);
    if (rc != ncclSuccess) {
      (void)ncclGroupEnd();
      c.Check(rc, "ncclBroadcast");
    }
    at += Bytes(counts[r], dtype);
  }
  c.Check(ncclGroupEnd(), "ncclGroupEnd");
  c.Finish();
}

void NcclAllReduceSum(const void* send, void* recv, int64_t count, DType dtype,
                      const std::vector<int>& ranks, int device, void* stream) {
  Collective c("NcclAllReduceSum", ranks, device, stream);
  NcclCheckSum(c.where().c_str(), dtype);
  const auto [type, op] = SumType(dtype);
  c.Begin();
  c.Check(ncclAllReduce(send, recv, static_cast<size_t>(count), type, op, c.comm(),
                        static_cast<cudaStream_t>(stream)),
          "ncclAllReduce");
  c.Finish();
}

void NcclReduceScatterSum(const void* send, void* recv, const std::vector<int64_t>& counts,
                          DType dtype, const std::vector<int>& ranks, int device, void* stream) {
  Collective c("NcclReduceScatterSum", ranks, device, stream);
  NcclCheckSum(c.where().c_str(), dtype);
  CheckCounts(counts, ranks, c.where());
  const auto s = static_cast<cudaStream_t>(stream);
  const auto [type, op] = SumType(dtype);
  c.Begin();
  if (AllEqual(counts)) {
    c.Check(ncclReduceScatter(send, recv, static_cast<size_t>(counts[0]), type, op, c.comm(), s),
            "ncclReduceScatter");
    c.Finish();
    return;
  }
  // Uneven: one reduce per rank, each to the rank that keeps that slice.
  const auto* in = static_cast<const char*>(send);
  c.Check(ncclGroupStart(), "ncclGroupStart");
  size_t at = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const ncclResult_t rc = ncclReduce(in + at, recv, static_cast<size_t>(counts[r]), type, op,
                                       static_cast<int>(r), c.comm(), s);
    if (rc != ncclSuccess) {
      (void)ncclGroupEnd();
      c.Check(rc, "ncclReduce");
    }
    at += Bytes(counts[r], dtype);
  }
  c.Check(ncclGroupEnd(), "ncclGroupEnd");
  c.Finish();
}

void NcclBroadcast(void* buf, const void* root_src, int64_t count, DType dtype, int root_index,
                   const std::vector<int>& ranks, int device, void* stream) {
  Collective c("NcclBroadcast", ranks, device, stream);
  const auto s = static_cast<cudaStream_t>(stream);
  if (c.me() == root_index && root_src != nullptr && root_src != buf && count > 0) {
    cuda::Check(cudaMemcpyAsync(buf, root_src, Bytes(count, dtype), cudaMemcpyDeviceToDevice, s),
                "cudaMemcpyAsync", c.where());
  }
  c.Begin();
  c.Check(ncclBroadcast(buf, buf, Bytes(count, dtype), ncclUint8, root_index, c.comm(), s),
          "ncclBroadcast");
  c.Finish();
}

void FinalizeNccl() {
  // Taken out under the lock, destroyed outside it: ncclCommDestroy may wait for the peers.
  std::map<Key, CommEntry> gone;
  {
    Comms& c = GetComms();
    std::lock_guard<std::mutex> lock(c.mu);
    gone.swap(c.by_key);
  }
  for (const auto& entry : gone) Release(entry.second, /*abort=*/false);
}

#else  // built without NCCL

namespace {
[[noreturn]] void NoNccl(const char* what) {
  throw Error(std::string(what) +
              ": this oneflow_lite was built without NCCL (it needs CUDA, MPI and NCCL at build "
              "time), so global tensors on cuda placements are not available");
}
}  // namespace

bool BuiltWithNccl() { return false; }
void NcclCheckSum(const char* op, DType) { NoNccl(op); }
void NcclAllGatherV(const void*, int64_t, void*, const std::vector<int64_t>&, DType,
                    const std::vector<int>&, int, void*) {
  NoNccl("NcclAllGatherV");
}
void NcclAllReduceSum(const void*, void*, int64_t, DType, const std::vector<int>&, int, void*) {
  NoNccl("NcclAllReduceSum");
}
void NcclReduceScatterSum(const void*, void*, const std::vector<int64_t>&, DType,
                          const std::vector<int>&, int, void*) {
  NoNccl("NcclReduceScatterSum");
}
void NcclBroadcast(void*, const void*, int64_t, DType, int, const std::vector<int>&, int, void*) {
  NoNccl("NcclBroadcast");
}
void FinalizeNccl() {}

#endif

}  // namespace ofl::kernels::collective
