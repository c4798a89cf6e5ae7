// The decisions behind the NCCL collectives' failure handling (nccl_collectives.cpp), kept apart
// from NCCL and CUDA so that they build and are tested without either: how an NCCL result is
// classified and turned into an exception, the wait for a collective's completion that ends it on
// an asynchronous NCCL error or a timeout, and the agreement that keeps every rank on the same
// communicator after one of them dropped its own.
//
// NCCL results are passed as the int values of ncclResult_t (nccl.h), named in nccl_result
// below; nccl_collectives.cpp checks at compile time that nccl.h agrees.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ofl::kernels::collective {

// ncclResult_t's values.
namespace nccl_result {
constexpr int kSuccess = 0;
constexpr int kUnhandledCudaError = 1;
constexpr int kSystemError = 2;
constexpr int kInternalError = 3;
constexpr int kInvalidArgument = 4;
constexpr int kInvalidUsage = 5;
constexpr int kRemoteError = 6;
constexpr int kInProgress = 7;
}  // namespace nccl_result

// What an NCCL result means for the communicator and for the caller.
enum class NcclErrorKind {
  kNone,        // ncclSuccess
  kInProgress,  // ncclInProgress: a nonblocking operation still runs; not a failure
  // The call was refused before anything was enqueued; the communicator is intact and kept.
  kInvalidArgument,  // ncclInvalidArgument: throws InvalidArgument
  kInvalidUsage,     // ncclInvalidUsage: throws DeviceError
  // The communicator is unusable (a peer failed or left, the network or a system call failed,
  // NCCL's own state is broken; an unknown result counts here too): it is aborted and dropped, and
  // the next collective over the same ranks builds a new one. Throws DeviceError: the GPU itself is
  // fine, so it is not marked failed (that would refuse every later op on it, the rebuild and the
  // copy of its tensors to the host included).
  kCommunicatorLost,
  // ncclUnhandledCudaError: a CUDA call inside NCCL failed. The communicator is aborted and
  // dropped as above; throws DeviceFailed when CUDA's error is sticky (the context is unusable
  // until the process exits, so the VM marks the device failed), DeviceError otherwise.
  kCudaError,
};

NcclErrorKind ClassifyNcclResult(int result);

// Whether a failure of `kind` leaves the communicator unusable (abort it and drop it).
bool NcclNeedsAbort(NcclErrorKind kind);

// Throws the exception for a failure of `kind` (not kNone or kInProgress) with `message`, which
// the caller has made name the call, the collective, its ranks and this rank; the consequence
// (refused, aborted and rebuilt, the device failed) is appended. `cuda_context_lost` matters for
// kCudaError only.
[[noreturn]] void ThrowNcclError(NcclErrorKind kind, bool cuda_context_lost,
                                 const std::string& message);

// What the failure handling needs from NCCL and CUDA, as callables (fakes in the tests).
struct NcclFailureHooks {
  // NCCL's text for a result, with the communicator's last error when there is one.
  std::function<std::string(int result)> describe;
  // Asked after kCudaError only: whether CUDA's error is sticky.
  std::function<bool()> cuda_context_lost;
  // Aborts the communicator (ncclCommAbort) and drops it from the cache; called at most once.
  std::function<void()> abort;
};

// Checks the result of an NCCL call: returns on success; otherwise aborts the communicator when
// the failure leaves it unusable, then throws (ThrowNcclError). `what` names the call and the
// collective ("NcclAllReduceSum over ranks [0, 1] on cuda:0 on rank 0: ncclAllReduce").
void CheckNcclResult(int result, const std::string& what, const NcclFailureHooks& hooks);

// The wait for one enqueued collective, on the thread that enqueued it.
struct NcclWait {
  // Names the collective, its ranks and this rank in errors.
  std::string where;
  // How long the collective may run on the device without completing (the hang timeout the
  // collective watchdog uses, OFL_VM_TIMEOUT_SECONDS), counted from when the device reached it
  // (`started`): the time its stream spends on earlier work of this rank is not the collective's.
  // <= 0: no timeout (an asynchronous error still ends the wait).
  double timeout_s = 0;
  // Whether the device reached the collective (an event recorded just before it completed).
  std::function<bool()> started;
  // Whether the collective completed (an event recorded just after it completed). May throw (a
  // CUDA error); the communicator is then aborted and the exception passed on.
  std::function<bool()> done;
  // The communicator's asynchronous error (ncclCommGetAsyncError), as an ncclResult_t value.
  std::function<int()> async_error;
  // Optional: what else is known when the wait fails (the collective watchdog's findings).
  std::function<std::string()> detail;
  NcclFailureHooks failure;
  // The clock (seconds, monotonic) and the pause between polls; steady_clock and sleep_for when
  // left empty.
  std::function<double()> now_s;
  std::function<void(double seconds)> sleep_s;
};

// Polls until the collective completes (returns), the communicator reports an asynchronous error
// (aborts it, throws per ClassifyNcclResult), or it ran `timeout_s` on the device without
// completing (aborts it, throws DeviceError). The asynchronous error is checked before completion:
// a collective whose communicator reported an error is not trusted even when its event completed.
// Polls back off from microseconds to 1 ms, so a long collective costs no core.
void WaitCollective(const NcclWait& wait);

// The agreement on a communicator, before every collective over its ranks: each member passes
// the generation of the communicator it holds for them (-1: none; a rank drops its own when it
// aborts it). Every member gets the same list and so the same decision: use the communicator
// when all hold the same generation, else every member drops what it holds and all build
// generation `max + 1` together. Without it, a rank that aborted after a timeout while a peer's
// side of the same collective completed would build a new communicator alone and pair its
// unique-id exchange with the peer's next collective.
struct CommDecision {
  bool reuse = false;
  int generation = 0;  // the one to use or to build
};
CommDecision AgreeOnCommunicator(const std::vector<int>& generations);

// Sends `bytes` bytes at `buf` from the member at index 0 to every member with nothing but an
// all-gather of one int per member (`gather`: this member's int in, every member's in list order
// out): 4 bytes a round, the root's int kept. The NCCL unique id travels this way over the GPU
// collective stream's own MPI channel (coll::GatherStatus), which no other thread uses.
void BroadcastBytesByGather(void* buf, size_t bytes, int my_index,
                            const std::function<std::vector<int>(int)>& gather);

}  // namespace ofl::kernels::collective
