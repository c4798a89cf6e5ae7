#include "kernels/collective/nccl_wait.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "oneflow_lite/error.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels::collective {
namespace {

using namespace nccl_result;  // NOLINT: the result values by name

constexpr const char* kRebuilt =
    "; the communicator was aborted and is rebuilt on the next collective over these ranks";

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", s);
  return buf;
}

double SteadyNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SleepFor(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// Calls `abort` once, whatever it throws: the error being raised is the one to report.
void AbortQuietly(const NcclFailureHooks& hooks) {
  if (!hooks.abort) return;
  try {
    hooks.abort();
  } catch (const std::exception&) {
  }
}

}  // namespace

NcclErrorKind ClassifyNcclResult(int result) {
  switch (result) {
    case kSuccess:
      return NcclErrorKind::kNone;
    case kInProgress:
      return NcclErrorKind::kInProgress;
    case kInvalidArgument:
      return NcclErrorKind::kInvalidArgument;
    case kInvalidUsage:
      return NcclErrorKind::kInvalidUsage;
    case kUnhandledCudaError:
      return NcclErrorKind::kCudaError;
    case kSystemError:
    case kInternalError:
    case kRemoteError:
    default:
      return NcclErrorKind::kCommunicatorLost;
  }
}

bool NcclNeedsAbort(NcclErrorKind kind) {
  return kind == NcclErrorKind::kCommunicatorLost || kind == NcclErrorKind::kCudaError;
}

void ThrowNcclError(NcclErrorKind kind, bool cuda_context_lost, const std::string& message) {
  switch (kind) {
    case NcclErrorKind::kInvalidArgument:
      throw InvalidArgument(message +
                            "; NCCL refused the arguments, nothing was enqueued and the "
                            "communicator is kept");
    case NcclErrorKind::kInvalidUsage:
      throw DeviceError(message +
                        "; NCCL refused the call, nothing was enqueued and the communicator is "
                        "kept");
    case NcclErrorKind::kCudaError:
      if (cuda_context_lost) {
        throw DeviceFailed(message + kRebuilt +
                           "; the CUDA context is unusable until the process exits");
      }
      throw DeviceError(message + kRebuilt);
    case NcclErrorKind::kNone:
    case NcclErrorKind::kInProgress:
      // Not failures; a caller that throws for them anyway gets a plain error rather than none.
      throw Error(message);
    case NcclErrorKind::kCommunicatorLost:
      break;
  }
  throw DeviceError(message + kRebuilt);
}

void CheckNcclResult(int result, const std::string& what, const NcclFailureHooks& hooks) {
  if (result == kSuccess) return;
  NcclErrorKind kind = ClassifyNcclResult(result);
  // The communicators here are blocking ones: a call never returns "in progress", so one that
  // does is not understood, and its communicator is not trusted either.
  if (kind == NcclErrorKind::kInProgress) kind = NcclErrorKind::kCommunicatorLost;
  const std::string message =
      what + " failed: " + (hooks.describe ? hooks.describe(result) : std::to_string(result));
  const bool lost =
      kind == NcclErrorKind::kCudaError && hooks.cuda_context_lost && hooks.cuda_context_lost();
  if (NcclNeedsAbort(kind)) AbortQuietly(hooks);
  ThrowNcclError(kind, lost, message);
}

void WaitCollective(const NcclWait& w) {
  const auto now = w.now_s ? w.now_s : std::function<double()>(SteadyNow);
  const auto sleep = w.sleep_s ? w.sleep_s : std::function<void(double)>(SleepFor);
  const auto detail = [&] {
    const std::string d = w.detail ? w.detail() : std::string();
    return d.empty() ? d : " (" + d + ")";
  };
  bool started = false;
  double started_at = 0;
  double pause = 2e-6;
  for (;;) {
    const int err = w.async_error ? w.async_error() : kSuccess;
    NcclErrorKind kind = ClassifyNcclResult(err);
    if (kind != NcclErrorKind::kNone && kind != NcclErrorKind::kInProgress) {
      const std::string message =
          w.where + ": NCCL reported an asynchronous error before the collective completed: " +
          (w.failure.describe ? w.failure.describe(err) : std::to_string(err)) +
          " (a peer failed or left, or the network failed)" + detail();
      // An asynchronous error always leaves the communicator unusable, refusals included.
      if (!NcclNeedsAbort(kind)) kind = NcclErrorKind::kCommunicatorLost;
      const bool lost = kind == NcclErrorKind::kCudaError && w.failure.cuda_context_lost &&
                        w.failure.cuda_context_lost();
      AbortQuietly(w.failure);
      ThrowNcclError(kind, lost, message);
    }
    bool done = false;
    try {
      done = w.done();
    } catch (...) {
      AbortQuietly(w.failure);
      throw;
    }
    if (done) return;
    if (w.timeout_s > 0) {
      if (!started) {
        try {
          started = w.started ? w.started() : true;
        } catch (...) {
          AbortQuietly(w.failure);
          throw;
        }
        if (started) started_at = now();
      } else if (now() - started_at >= w.timeout_s) {
        const std::string message =
            w.where + ": the collective did not complete within " + Seconds(w.timeout_s) +
            " s of starting on the device (the hang timeout, OFL_VM_TIMEOUT_SECONDS): a peer is "
            "gone, stuck, or out of step" +
            detail();
        AbortQuietly(w.failure);
        ThrowNcclError(NcclErrorKind::kCommunicatorLost, false, message);
      }
    }
    sleep(pause);
    pause = std::min(pause * 2, 1e-3);
  }
}

CommDecision AgreeOnCommunicator(const std::vector<int>& generations) {
  CommDecision d;
  if (generations.empty()) return d;
  const int first = generations[0];
  bool same = first >= 0;
  int highest = -1;
  for (int g : generations) {
    same = same && g == first;
    highest = std::max(highest, g);
  }
  d.reuse = same;
  d.generation = same ? first : highest + 1;
  return d;
}

void BroadcastBytesByGather(void* buf, size_t bytes, int my_index,
                            const std::function<std::vector<int>(int)>& gather) {
  auto* p = static_cast<unsigned char*>(buf);
  for (size_t at = 0; at < bytes; at += sizeof(int)) {
    const size_t n = std::min(sizeof(int), bytes - at);
    int mine = 0;
    if (my_index == 0) std::memcpy(&mine, p + at, n);
    const std::vector<int> all = gather(mine);
    if (all.empty()) {
      throw Error("BroadcastBytesByGather: the gather returned no value for the root");
    }
    if (my_index != 0) std::memcpy(p + at, &all[0], n);
  }
}

}  // namespace ofl::kernels::collective
