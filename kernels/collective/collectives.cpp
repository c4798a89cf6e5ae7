// The process group of collectives.h: its state and lifecycle (init, finalize, the hook into the
// program's MPI_Finalize, the world-wide collective-checks setting, aborting the job). The
// collectives themselves are in collective_calls.cpp, MPI's side of them in mpi_transport.cpp.
#include "kernels/collective/collectives.h"

#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#ifdef OFL_WITH_MPI
#include <mpi.h>
#endif

#include "kernels/collective/nccl_collectives.h"
#include "kernels/collective/process_group.h"
#include "kernels/collective/rank_list.h"
#include "kernels/collective/watchdog.h"
#include "kernels/log_warning.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/settings.h"

namespace ofl::kernels::collective {

namespace group {

// Never destroyed: a stream worker may still look at it while the process exits.
State& GetState() {
  static State* state = new State();
  return *state;
}

}  // namespace group

using namespace group;  // NOLINT(google-build-using-namespace): the process group's own parts

bool BuiltWithMpi() {
#ifdef OFL_WITH_MPI
  return true;
#else
  return false;
#endif
}

namespace {

bool LocalChecksSetting() { return settings::Flag("OFL_CHECK_COLLECTIVES"); }

// The teardown of FinalizeProcessGroup, under s.mu. `by_shutdown`: called by FinalizeProcessGroup
// (it also removes the MPI_Finalize hook and, when InitProcessGroup initialised MPI, finalises it);
// else by the program's MPI_Finalize, inside it.
void TearDownLocked(bool by_shutdown) {
  State& s = GetState();
  s.tearing_down = true;
#ifdef OFL_WITH_MPI
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {  // best effort: ofl::shutdown does not throw
    StopWatchdog();
    FinalizeNccl();  // its communicators before MPI, which handed them their ids
    for (auto& entry : s.comms) {
      if (entry.second->comm != MPI_COMM_NULL) MPI_Comm_free(&entry.second->comm);
    }
    if (s.float16_sum != MPI_OP_NULL) MPI_Op_free(&s.float16_sum);
    if (s.bfloat16_sum != MPI_OP_NULL) MPI_Op_free(&s.bfloat16_sum);
    // The program's MPI_Finalize must not call back into a group that is gone (inside that
    // MPI_Finalize the attribute is being deleted already).
    if (s.self_attr_set && by_shutdown) MPI_Comm_delete_attr(MPI_COMM_SELF, s.self_keyval);
    s.self_attr_set = false;
    if (s.own_mpi && by_shutdown) MPI_Finalize();
  }
  s.comms.clear();
  s.float16_sum = s.bfloat16_sum = MPI_OP_NULL;
  s.own_mpi = false;
#endif
  (void)by_shutdown;
  s.initialized = false;
  s.finalized = true;
}

#ifdef OFL_WITH_MPI
// MPI_Finalize deletes MPI_COMM_SELF's attributes before anything else, with every MPI function
// still usable: the last moment to let the collectives issued so far run and to stop the watchdog
// thread, whose next MPI_Iprobe after MPI_Finalize would abort the job.
int OnMpiFinalize(MPI_Comm /*comm*/, int /*keyval*/, void* /*attr*/, void* /*extra*/) {
  State& s = GetState();
  if (s.tearing_down || s.finalized) return MPI_SUCCESS;  // FinalizeProcessGroup's own delete
  std::function<void()> hook;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    hook = s.before_finalize;
  }
  if (hook) {
    try {
      hook();
    } catch (const std::exception& e) {
      LogWarning(std::string("MPI_Finalize: waiting for the runtime's collectives failed: ") +
                 e.what());
    }
  }
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.finalized) return MPI_SUCCESS;
  s.finalized_by_program = true;
  TearDownLocked(false);
  return MPI_SUCCESS;
}
#endif

}  // namespace

void SetBeforeMpiFinalizeHook(std::function<void()> hook) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.before_finalize = std::move(hook);
}

bool CollectiveChecksEnabled() {
  State& s = GetState();
  int v = s.checks.load(std::memory_order_acquire);
  if (v < 0) {
    int unset = -1;
    v = LocalChecksSetting() ? 1 : 0;
    if (!s.checks.compare_exchange_strong(unset, v)) v = unset;
  }
  return v == 1;
}

void SetCollectiveChecks(bool on) { GetState().checks.store(on ? 1 : 0); }

CollectiveChecksSetting AgreeOnCollectiveChecks(const std::vector<int>& per_rank) {
  CollectiveChecksSetting out;
  std::vector<int> on, off;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    (per_rank[r] ? on : off).push_back(static_cast<int>(r));
  }
  out.on = !on.empty();
  if (!on.empty() && !off.empty()) {
    out.warning = "OFL_CHECK_COLLECTIVES is on for rank(s) " + Join(on) + " but not for rank(s) " +
                  Join(off) +
                  ": collective checks are on for every rank (they change the exchange before "
                  "every collective, so they are on everywhere or nowhere; to turn them off, set "
                  "OFL_CHECK_COLLECTIVES=0 on every rank, e.g. mpiexec -x OFL_CHECK_COLLECTIVES=0)";
  }
  return out;
}

void InitProcessGroup() {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.initialized) return;
#ifdef OFL_WITH_MPI
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) {
    throw Error(
        "InitProcessGroup: MPI was already finalized (ofl::shutdown or the program); it cannot be "
        "initialised twice in one process");
  }
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    CheckMpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread",
             nullptr);
    s.own_mpi = true;
  } else {
    CheckMpi(MPI_Query_thread(&provided), "MPI_Query_thread", nullptr);
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    throw Error("InitProcessGroup: MPI provides thread level " + std::to_string(provided) +
                ", below MPI_THREAD_SERIALIZED: the collectives run on stream worker threads");
  }
  s.serialize_calls = provided < MPI_THREAD_MULTIPLE;
  // Failures come back as codes that become ofl::Error, instead of aborting every rank.
  CheckMpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler",
           nullptr);
  int rank = 0;
  int size = 1;
  CheckMpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank", nullptr);
  CheckMpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size", nullptr);
  MakeHalfSumOps();
  // OFL_CHECK_COLLECTIVES changes what the agreement before every collective exchanges: a rank
  // without it would pair a short exchange with another rank's long one. Every rank takes the
  // same decision.
  const int mine = LocalChecksSetting() ? 1 : 0;
  std::vector<int> all(static_cast<size_t>(size), mine);
  if (size > 1) {
    CheckMpi(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD),
             "MPI_Allgather (OFL_CHECK_COLLECTIVES)", nullptr);
  }
  const CollectiveChecksSetting checks = AgreeOnCollectiveChecks(all);
  s.checks = checks.on ? 1 : 0;
  if (!checks.warning.empty()) LogWarning("rank " + std::to_string(rank) + ": " + checks.warning);
  // The hook into the program's MPI_Finalize (see collectives.h).
  if (s.self_keyval == MPI_KEYVAL_INVALID) {
    CheckMpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &OnMpiFinalize, &s.self_keyval, nullptr),
             "MPI_Comm_create_keyval", nullptr);
  }
  CheckMpi(MPI_Comm_set_attr(MPI_COMM_SELF, s.self_keyval, nullptr), "MPI_Comm_set_attr", nullptr);
  s.self_attr_set = true;
  s.rank = rank;
  s.size = size;
  StartWatchdog();
#endif
  // Without MPI (or when the program keeps MPI alive) the group may start again after a finalize.
  s.tearing_down = false;
  s.finalized_by_program = false;
  s.finalized = false;
  s.initialized = true;
}

bool ProcessGroupInitialized() { return GetState().initialized; }
int WorldRank() { return GetState().rank; }
int WorldSize() { return GetState().size; }

int NodeLocalRank() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  return local != nullptr ? std::atoi(local) : WorldRank();
}

void AbortJob(const std::string& why, double grace_s) {
  State& s = GetState();
  if (!s.initialized || s.finalized || s.size < 2) return;
#ifdef OFL_WITH_MPI
  LogError("rank " + std::to_string(s.rank.load()) + " ends the job (MPI_Abort): " + why);
  NotifyJobFailure(why, grace_s);
  MPI_Abort(MPI_COMM_WORLD, 1);
#else
  (void)why;
  (void)grace_s;
#endif
}

void FinalizeProcessGroup() {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.finalized) return;
  TearDownLocked(true);
}

}  // namespace ofl::kernels::collective
