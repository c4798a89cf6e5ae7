// The failure handling of the NCCL collectives (kernels/collective/nccl_wait.h) with fakes for NCCL
// and CUDA and a fake clock: how each NCCL result is classified and thrown, when the communicator
// is aborted (once), how the completion wait ends (completion, an asynchronous error, the
// timeout), the agreement on a communicator after one rank dropped its own, and the unique id's
// way over 4-byte gathers. No GPU, NCCL or MPI is needed.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/collective/nccl_wait.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels::collective {
namespace {

using namespace nccl_result;  // NOLINT: the result values by name

constexpr const char* kWhere =
    "NcclAllReduceSum over ranks [0, 1] on cuda:0, rank 1, in boxing P->B (all-reduce) #3 over "
    "[0, 1]";

// Fakes for NCCL's and CUDA's side, counting what the code under test asked of them.
struct FakeComm {
  int aborts = 0;
  bool sticky = false;
  NcclFailureHooks Hooks() {
    NcclFailureHooks h;
    h.describe = [](int rc) { return "nccl result " + std::to_string(rc); };
    h.cuda_context_lost = [this] { return sticky; };
    h.abort = [this] { ++aborts; };
    return h;
  }
};

// A fake clock that advances only when the wait sleeps. A wait that never ends fails the test
// after many polls instead of hanging it.
struct FakeClock {
  double now = 0;
  int polls = 0;
  void Attach(NcclWait* w) {
    w->now_s = [this] { return now; };
    w->sleep_s = [this](double s) {
      if (++polls > 1000000) throw std::logic_error("the wait did not end");
      now += s;
    };
  }
};

// The message of the exception `f` throws, which must be of type E and, unless `failed`, not
// DeviceFailed.
template <class E, class F>
std::string MessageOf(F&& f, bool failed = false) {
  try {
    f();
  } catch (const E& e) {
    const bool is_failed = dynamic_cast<const DeviceFailed*>(&e) != nullptr;
    EXPECT_EQ(is_failed, failed) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another type: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

TEST(NcclErrorKindTest, EachResultHasItsKind) {
  EXPECT_EQ(ClassifyNcclResult(kSuccess), NcclErrorKind::kNone);
  EXPECT_EQ(ClassifyNcclResult(kUnhandledCudaError), NcclErrorKind::kCudaError);
  EXPECT_EQ(ClassifyNcclResult(kSystemError), NcclErrorKind::kCommunicatorLost);
  EXPECT_EQ(ClassifyNcclResult(kInternalError), NcclErrorKind::kCommunicatorLost);
  EXPECT_EQ(ClassifyNcclResult(kInvalidArgument), NcclErrorKind::kInvalidArgument);
  EXPECT_EQ(ClassifyNcclResult(kInvalidUsage), NcclErrorKind::kInvalidUsage);
  EXPECT_EQ(ClassifyNcclResult(kRemoteError), NcclErrorKind::kCommunicatorLost);
  EXPECT_EQ(ClassifyNcclResult(kInProgress), NcclErrorKind::kInProgress);
  EXPECT_EQ(ClassifyNcclResult(42), NcclErrorKind::kCommunicatorLost);  // unknown: not trusted
}

TEST(NcclErrorKindTest, OnlyFailuresThatBreakTheCommunicatorAbortIt) {
  EXPECT_FALSE(NcclNeedsAbort(NcclErrorKind::kNone));
  EXPECT_FALSE(NcclNeedsAbort(NcclErrorKind::kInProgress));
  EXPECT_FALSE(NcclNeedsAbort(NcclErrorKind::kInvalidArgument));
  EXPECT_FALSE(NcclNeedsAbort(NcclErrorKind::kInvalidUsage));
  EXPECT_TRUE(NcclNeedsAbort(NcclErrorKind::kCommunicatorLost));
  EXPECT_TRUE(NcclNeedsAbort(NcclErrorKind::kCudaError));
}

TEST(CheckNcclResultTest, SuccessNeitherThrowsNorAborts) {
  FakeComm comm;
  CheckNcclResult(kSuccess, std::string(kWhere) + ": ncclAllReduce", comm.Hooks());
  EXPECT_EQ(comm.aborts, 0);
}

TEST(CheckNcclResultTest, RefusedArgumentsAreInvalidArgumentAndKeepTheCommunicator) {
  FakeComm comm;
  const std::string msg = MessageOf<InvalidArgument>([&] {
    CheckNcclResult(kInvalidArgument, std::string(kWhere) + ": ncclAllReduce", comm.Hooks());
  });
  EXPECT_EQ(comm.aborts, 0);
  EXPECT_NE(msg.find("ncclAllReduce failed: nccl result 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("communicator is kept"), std::string::npos) << msg;
}

TEST(CheckNcclResultTest, InvalidUsageIsADeviceErrorAndKeepsTheCommunicator) {
  FakeComm comm;
  const std::string msg = MessageOf<DeviceError>([&] {
    CheckNcclResult(kInvalidUsage, std::string(kWhere) + ": ncclAllReduce", comm.Hooks());
  });
  EXPECT_EQ(comm.aborts, 0);
  EXPECT_NE(msg.find("communicator is kept"), std::string::npos) << msg;
}

TEST(CheckNcclResultTest, ABrokenCommunicatorIsAbortedOnceAndTheDeviceStaysUsable) {
  for (int rc : {kSystemError, kInternalError, kRemoteError}) {
    FakeComm comm;
    const std::string msg = MessageOf<DeviceError>(
        [&] { CheckNcclResult(rc, std::string(kWhere) + ": ncclAllReduce", comm.Hooks()); });
    EXPECT_EQ(comm.aborts, 1) << rc;
    EXPECT_NE(msg.find(kWhere), std::string::npos) << msg;
    EXPECT_NE(msg.find("aborted and is rebuilt"), std::string::npos) << msg;
  }
}

TEST(CheckNcclResultTest, AnUnhandledCudaErrorFailsTheDeviceOnlyWhenCudaSaysItIsSticky) {
  FakeComm sticky;
  sticky.sticky = true;
  const std::string msg = MessageOf<DeviceFailed>(
      [&] {
        CheckNcclResult(kUnhandledCudaError, std::string(kWhere) + ": ncclAllReduce",
                        sticky.Hooks());
      },
      /*failed=*/true);
  EXPECT_EQ(sticky.aborts, 1);
  EXPECT_NE(msg.find("CUDA context is unusable"), std::string::npos) << msg;

  FakeComm passing;
  MessageOf<DeviceError>([&] {
    CheckNcclResult(kUnhandledCudaError, std::string(kWhere) + ": ncclAllReduce", passing.Hooks());
  });
  EXPECT_EQ(passing.aborts, 1);
}

TEST(CheckNcclResultTest, InProgressFromABlockingCommunicatorIsNotTrusted) {
  FakeComm comm;
  MessageOf<DeviceError>(
      [&] { CheckNcclResult(kInProgress, std::string(kWhere) + ": ncclAllReduce", comm.Hooks()); });
  EXPECT_EQ(comm.aborts, 1);
}

// A wait over fakes: the collective completes at the `done_after`-th completion query (-1:
// never); the communicator reports `error` from the `error_at`-th asynchronous-error query on
// (-1: never).
struct FakeCollective {
  FakeComm comm;
  FakeClock clock;
  int done_polls = 0;
  int error_polls = 0;
  int done_after = -1;
  int error_at = -1;
  int error = kRemoteError;
  bool starts = true;
  NcclWait Wait(double timeout_s) {
    NcclWait w;
    w.where = kWhere;
    w.timeout_s = timeout_s;
    w.started = [this] { return starts; };
    w.done = [this] { return done_after >= 0 && ++done_polls >= done_after; };
    w.async_error = [this] {
      return error_at >= 0 && ++error_polls >= error_at ? error : kSuccess;
    };
    w.failure = comm.Hooks();
    clock.Attach(&w);
    return w;
  }
};

TEST(WaitCollectiveTest, ACompletedCollectiveReturnsWithoutAbort) {
  FakeCollective c;
  c.done_after = 5;
  WaitCollective(c.Wait(30));
  EXPECT_EQ(c.done_polls, 5);
  EXPECT_EQ(c.comm.aborts, 0);
}

TEST(WaitCollectiveTest, APeerErrorEndsTheWaitNamingTheRankAndCollectiveAndAbortsOnce) {
  FakeCollective c;
  c.error_at = 3;  // a peer died: NCCL reports a remote error while the collective spins
  const std::string msg = MessageOf<DeviceError>([&] { WaitCollective(c.Wait(30)); });
  EXPECT_EQ(c.comm.aborts, 1);
  EXPECT_EQ(c.error_polls, 3);
  EXPECT_NE(msg.find("rank 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NcclAllReduceSum over ranks [0, 1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("boxing P->B (all-reduce) #3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("asynchronous error"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nccl result 6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("aborted and is rebuilt"), std::string::npos) << msg;
}

TEST(WaitCollectiveTest, AnAsynchronousErrorWinsOverACompletedEvent) {
  FakeCollective c;
  c.done_after = 1;
  c.error_at = 1;
  c.error = kSystemError;
  MessageOf<DeviceError>([&] { WaitCollective(c.Wait(30)); });
  EXPECT_EQ(c.comm.aborts, 1);
}

TEST(WaitCollectiveTest, AnAsynchronousStickyCudaErrorFailsTheDevice) {
  FakeCollective c;
  c.error_at = 2;
  c.error = kUnhandledCudaError;
  c.comm.sticky = true;
  MessageOf<DeviceFailed>([&] { WaitCollective(c.Wait(30)); }, /*failed=*/true);
  EXPECT_EQ(c.comm.aborts, 1);
}

TEST(WaitCollectiveTest, AnAsynchronousRefusalStillAbortsTheCommunicator) {
  FakeCollective c;
  c.error_at = 2;
  c.error = kInvalidUsage;
  MessageOf<DeviceError>([&] { WaitCollective(c.Wait(30)); });
  EXPECT_EQ(c.comm.aborts, 1);
}

TEST(WaitCollectiveTest, InProgressIsNoError) {
  FakeCollective c;
  c.error_at = 1;
  c.error = kInProgress;
  c.done_after = 4;
  WaitCollective(c.Wait(30));
  EXPECT_EQ(c.comm.aborts, 0);
}

TEST(WaitCollectiveTest, ACollectiveThatNeverCompletesTimesOutAndAbortsOnce) {
  FakeCollective c;
  NcclWait w = c.Wait(5);
  w.detail = [] { return "the watchdog asked the other ranks where they are"; };
  const std::string msg = MessageOf<DeviceError>([&] { WaitCollective(w); });
  EXPECT_EQ(c.comm.aborts, 1);
  EXPECT_GE(c.clock.now, 5.0);  // the fake clock: it gave up only once the timeout had passed
  EXPECT_NE(msg.find("did not complete within 5.0 s"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the watchdog asked"), std::string::npos) << msg;
  EXPECT_NE(msg.find("aborted and is rebuilt"), std::string::npos) << msg;
}

TEST(WaitCollectiveTest, TheTimeoutCountsFromWhenTheDeviceReachedTheCollective) {
  // The stream is busy with this rank's earlier work far beyond the timeout, then the collective
  // starts and completes: no timeout.
  FakeCollective c;
  c.starts = false;
  NcclWait w = c.Wait(5);
  const auto started = [&c] { return c.clock.now >= 100; };
  w.started = started;
  w.done = [&c, started] { return started() && c.clock.now >= 102; };
  WaitCollective(w);
  EXPECT_EQ(c.comm.aborts, 0);
}

TEST(WaitCollectiveTest, NoTimeoutWaitsUntilCompletion) {
  FakeCollective c;
  NcclWait w = c.Wait(0);
  w.done = [&c] { return c.clock.now >= 100; };
  WaitCollective(w);
  EXPECT_EQ(c.comm.aborts, 0);
}

TEST(WaitCollectiveTest, ACudaErrorWhileQueryingAbortsAndPassesTheErrorOn) {
  FakeCollective c;
  NcclWait w = c.Wait(30);
  w.done = []() -> bool { throw DeviceFailed("cudaEventQuery failed: cudaErrorIllegalAddress"); };
  MessageOf<DeviceFailed>([&] { WaitCollective(w); }, /*failed=*/true);
  EXPECT_EQ(c.comm.aborts, 1);
}

TEST(AgreeOnCommunicatorTest, EveryMemberHoldingTheSameGenerationReusesIt) {
  const CommDecision d = AgreeOnCommunicator({3, 3, 3});
  EXPECT_TRUE(d.reuse);
  EXPECT_EQ(d.generation, 3);
  const CommDecision one = AgreeOnCommunicator({0});
  EXPECT_TRUE(one.reuse);
  EXPECT_EQ(one.generation, 0);
}

TEST(AgreeOnCommunicatorTest, AMemberThatDroppedItsOwnMakesEveryoneBuildANewOne) {
  const CommDecision d = AgreeOnCommunicator({2, -1, 2});
  EXPECT_FALSE(d.reuse);
  EXPECT_EQ(d.generation, 3);
  const CommDecision mixed = AgreeOnCommunicator({4, 5});
  EXPECT_FALSE(mixed.reuse);
  EXPECT_EQ(mixed.generation, 6);
}

TEST(AgreeOnCommunicatorTest, NoneHeldBuildsTheFirst) {
  const CommDecision d = AgreeOnCommunicator({-1, -1});
  EXPECT_FALSE(d.reuse);
  EXPECT_EQ(d.generation, 0);
}

TEST(BroadcastBytesByGatherTest, TheRootsBytesReachAnotherMember) {
  // 13 bytes: three whole ints and a tail. The root runs first and its ints are recorded; the
  // other member then gets, round by round, what an all-gather would give it.
  std::vector<unsigned char> root(13), other(13, 0xEE);
  for (size_t i = 0; i < root.size(); ++i) root[i] = static_cast<unsigned char>(17 * i + 3);
  const std::vector<unsigned char> original = root;
  std::vector<int> sent;
  BroadcastBytesByGather(root.data(), root.size(), 0, [&](int v) {
    sent.push_back(v);
    return std::vector<int>{v, 0};
  });
  EXPECT_EQ(root, original);
  ASSERT_EQ(sent.size(), 4u);
  size_t round = 0;
  BroadcastBytesByGather(other.data(), other.size(), 1, [&](int v) {
    EXPECT_EQ(v, 0);
    return std::vector<int>{sent.at(round++), v};
  });
  EXPECT_EQ(other, original);
}

}  // namespace
}  // namespace ofl::kernels::collective
