// The process group and the collectives of collectives.h: MPI when the library is built with it
// (OFL_WITH_MPI), and the one-process world's local copy otherwise or for a one-rank placement.
// Every argument is checked before the first message, and the checks that depend only on what all
// ranks pass alike (the placement, the shared counts) come first, so that a bad call throws on
// every rank instead of leaving the others waiting inside a collective.
#include "kernels/collective/collectives.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#ifdef OFL_WITH_MPI
#include <mpi.h>
#endif

#include "kernels/collective/nccl_collectives.h"
#include "kernels/collective/rank_list.h"
#include "kernels/collective/watchdog.h"
#include "kernels/log_warning.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/settings.h"

namespace ofl::kernels::collective {
namespace {

#ifdef OFL_WITH_MPI
// std::call_once makes a thread that needs a communicator another thread is creating wait for it,
// without holding the cache's mutex across MPI_Comm_create_group (which blocks on the other ranks:
// holding it there could deadlock two device workers creating different communicators).
struct CommEntry {
  std::once_flag once;
  MPI_Comm comm = MPI_COMM_NULL;
};
#endif

struct State {
  std::mutex mu;  // init, finalize and the communicator cache
  std::atomic<bool> initialized{false};
  std::atomic<bool> finalized{false};
  std::atomic<int> rank{0};
  std::atomic<int> size{1};
  // OFL_CHECK_COLLECTIVES: -1 until first asked (then this process's own setting), 0 or 1; made
  // world-wide by InitProcessGroup.
  std::atomic<int> checks{-1};
  // Set while FinalizeProcessGroup tears down (its own MPI_Comm_delete_attr and MPI_Finalize run
  // the finalize callback, which must then do nothing), and when the program's MPI_Finalize did.
  std::atomic<bool> tearing_down{false};
  std::atomic<bool> finalized_by_program{false};
  std::function<void()> before_finalize;  // under mu
#ifdef OFL_WITH_MPI
  int self_keyval = MPI_KEYVAL_INVALID;  // the attribute on MPI_COMM_SELF that hooks MPI_Finalize
  bool self_attr_set = false;
  bool own_mpi = false;          // InitProcessGroup called MPI_Init_thread, so it finalises MPI
  bool serialize_calls = false;  // MPI gave MPI_THREAD_SERIALIZED only: one MPI call at a time
  std::mutex call_mu;
  // Ordered by the rank list, so every rank frees its communicators in the same order.
  std::map<std::vector<int>, std::shared_ptr<CommEntry>> comms;
  MPI_Op float16_sum = MPI_OP_NULL;
  MPI_Op bfloat16_sum = MPI_OP_NULL;
#endif
};

// Never destroyed: a stream worker may still look at it while the process exits.
State& GetState() {
  static State* state = new State();
  return *state;
}

// What a collective was asked to do, formatted only when an error names it.
struct Call {
  const char* name;
  const std::vector<int>& ranks;
  DType dtype;
  int64_t count = -1;
  const char* count_name = "count";
  const char* counts_name = "counts";
  const std::vector<int64_t>* counts = nullptr;
  const std::vector<int64_t>* recv_counts = nullptr;

  std::string Describe() const {
    std::string s = std::string(name) + " over ranks " + Join(ranks) + " (" + to_string(dtype);
    if (!counts || count >= 0) s += std::string(", ") + count_name + " " + std::to_string(count);
    if (counts) s += std::string(", ") + counts_name + " " + Join(*counts);
    if (recv_counts) s += ", recv_counts " + Join(*recv_counts);
    return s + ")";
  }
};

// Returns this process's index in the placement. The world checks come before the membership
// check: every rank that is handed a rank outside the world throws the same error.
int CheckPlacement(const Call& call) {
  State& s = GetState();
  if (s.finalized) {
    throw Error(call.Describe() +
                (s.finalized_by_program
                     ? ": the process group was finalized by the program's MPI_Finalize"
                     : ": the process group was finalized (ofl::shutdown)"));
  }
  if (element_size(call.dtype) == 0) throw InvalidArgument(call.Describe() + ": unknown dtype");
  const int world = s.size;
  if (call.ranks.empty()) throw InvalidArgument(call.Describe() + ": the rank list is empty");
  std::vector<bool> seen(world, false);
  for (int r : call.ranks) {
    if (r < 0 || r >= world) {
      throw InvalidArgument(call.Describe() + ": rank " + std::to_string(r) +
                            " is outside the world of " + std::to_string(world) + " process(es)");
    }
    if (seen[r]) {
      throw InvalidArgument(call.Describe() + ": rank " + std::to_string(r) + " appears twice");
    }
    seen[r] = true;
  }
  for (size_t i = 0; i < call.ranks.size(); ++i) {
    if (call.ranks[i] == s.rank) return static_cast<int>(i);
  }
  throw InvalidArgument(call.Describe() + ": this process (rank " + std::to_string(s.rank.load()) +
                        ") is not in the placement; only its ranks call its collectives");
}

// MPI-3 counts and displacements are int: refuse what would not fit rather than truncate.
// `what`, with `index` when it is one entry of a list, names the value.
void CheckCount(const Call& call, const char* what, int64_t v, int64_t index = -1) {
  if (v >= 0 && v <= INT_MAX) return;
  const std::string name = std::string(what) +
                           (index >= 0 ? "[" + std::to_string(index) + "]" : "") + " " +
                           std::to_string(v);
  if (v < 0) throw InvalidArgument(call.Describe() + ": " + name + " is negative");
  throw Error(call.Describe() + ": " + name +
              " is above INT_MAX (2147483647), the most elements an MPI-3 count addresses");
}

// One entry per rank, each an int; with `sum`, their sum too (the last displacement of a vector
// collective, and MPI's own total, must fit).
int64_t CheckCounts(const Call& call, const char* what, const std::vector<int64_t>& counts,
                    bool sum = true) {
  if (counts.size() != call.ranks.size()) {
    throw InvalidArgument(call.Describe() + ": " + what + " has " + std::to_string(counts.size()) +
                          " entries for " + std::to_string(call.ranks.size()) + " rank(s)");
  }
  int64_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    CheckCount(call, what, counts[i], static_cast<int64_t>(i));
    total += counts[i];
  }
  if (sum) CheckCount(call, (std::string("the sum of ") + what).c_str(), total);
  return total;
}

void LocalCopy(void* dst, const void* src, int64_t count, DType dtype) {
  const size_t bytes = static_cast<size_t>(count) * element_size(dtype);
  if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
}

#ifdef OFL_WITH_MPI
// Equal counts take MPI's non-vector collectives, whose algorithms are the better tuned.
bool AllEqual(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x != v[0]) return false;
  }
  return true;
}

// Bool is one byte (0 or 1); the halves move as their bits and are summed by HalfSum.
MPI_Datatype MoveType(DType dtype) {
  static_assert(kNumDTypes == 10, "a DType without an MPI type");
  const MPI_Datatype types[kNumDTypes] = {MPI_UINT8_T, MPI_UINT8_T, MPI_INT8_T,   MPI_INT16_T,
                                          MPI_INT32_T, MPI_INT64_T, MPI_UINT16_T, MPI_UINT16_T,
                                          MPI_FLOAT,   MPI_DOUBLE};  // in DType order
  return types[static_cast<int>(dtype)];
}

// MPI has no half-precision types: add in float32 and round back once per step.
template <class Half>
void HalfSum(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float sum = static_cast<float>(Half::from_bits(a[i])) + Half::from_bits(b[i]);
    b[i] = Half(sum).bits;
  }
}

MPI_Op SumOp(DType dtype) {
  // MPI_LOR is defined on MPI_UINT8_T and yields 0 or 1: the clamped bool sum.
  if (dtype == DType::kBool) return MPI_LOR;
  if (dtype == DType::kFloat16) return GetState().float16_sum;
  if (dtype == DType::kBFloat16) return GetState().bfloat16_sum;
  return MPI_SUM;
}

std::string MpiErrorString(int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(rc);
  return std::string(msg, len);
}

// `call` is null for the process group's own calls.
void CheckMpi(int rc, const char* fn, const Call* call) {
  if (rc == MPI_SUCCESS) return;
  const std::string where = call ? call->Describe() : std::string("InitProcessGroup");
  throw Error(where + ": " + fn + " failed: " + MpiErrorString(rc));
}

// Held around MPI calls when MPI gave MPI_THREAD_SERIALIZED only (with MPI_THREAD_MULTIPLE, an
// empty lock). Serialising blocking collectives of two device workers could deadlock across
// ranks, which is why InitProcessGroup asks for MPI_THREAD_MULTIPLE.
std::unique_lock<std::mutex> SerializeMpi() {
  State& s = GetState();
  return s.serialize_calls ? std::unique_lock<std::mutex>(s.call_mu)
                           : std::unique_lock<std::mutex>();
}

std::vector<int> ToInt(const std::vector<int64_t>& v) {
  return std::vector<int>(v.begin(), v.end());
}

std::vector<int> Displacements(const std::vector<int64_t>& counts) {
  std::vector<int> displs(counts.size());
  int64_t at = 0;  // CheckCounts bounded the sum by INT_MAX
  for (size_t i = 0; i < counts.size(); ++i) {
    displs[i] = static_cast<int>(at);
    at += counts[i];
  }
  return displs;
}

// The communicator of a placement: its ranks in list order, so a rank's index is its rank there.
// Channel 0 is the data collectives'; another channel gets a communicator of its own over the same
// ranks (GatherStatus).
MPI_Comm GetComm(const Call& call, int channel = 0) {
  State& s = GetState();
  const std::vector<int>& ranks = call.ranks;
  bool world = channel == 0 && static_cast<int>(ranks.size()) == s.size;
  for (size_t i = 0; world && i < ranks.size(); ++i) world = ranks[i] == static_cast<int>(i);
  if (world) return MPI_COMM_WORLD;
  std::vector<int> key;
  if (channel != 0) key.push_back(-1 - channel);  // never a rank
  key.insert(key.end(), ranks.begin(), ranks.end());
  std::shared_ptr<CommEntry> entry;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    std::shared_ptr<CommEntry>& slot = s.comms[key];
    if (!slot) slot = std::make_shared<CommEntry>();
    entry = slot;
  }
  std::call_once(entry->once, [&] {
    std::unique_lock<std::mutex> lock = SerializeMpi();
    MPI_Group world_group = MPI_GROUP_NULL;
    MPI_Group group = MPI_GROUP_NULL;
    CheckMpi(MPI_Comm_group(MPI_COMM_WORLD, &world_group), "MPI_Comm_group", &call);
    const int rc =
        MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &group);
    MPI_Group_free(&world_group);
    CheckMpi(rc, "MPI_Group_incl", &call);
    // Only the members take part (MPI-3). The tag tells apart creations that threads run at the
    // same time; every member derives the same one from the list.
    uint32_t tag = 17 + static_cast<uint32_t>(channel) * 7919;
    for (int r : ranks) tag = tag * 31 + static_cast<uint32_t>(r);
    MPI_Comm comm = MPI_COMM_NULL;
    const int create_rc =
        MPI_Comm_create_group(MPI_COMM_WORLD, group, static_cast<int>(tag % 32768), &comm);
    MPI_Group_free(&group);
    CheckMpi(create_rc, "MPI_Comm_create_group", &call);
    CheckMpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", &call);
    entry->comm = comm;
  });
  return entry->comm;
}
#endif  // OFL_WITH_MPI

}  // namespace

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
  if (s.float16_sum == MPI_OP_NULL) {
    CheckMpi(MPI_Op_create(&HalfSum<float16>, 1, &s.float16_sum), "MPI_Op_create", nullptr);
  }
  if (s.bfloat16_sum == MPI_OP_NULL) {
    CheckMpi(MPI_Op_create(&HalfSum<bfloat16>, 1, &s.bfloat16_sum), "MPI_Op_create", nullptr);
  }
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

std::vector<int> GatherStatus(int status, const std::vector<int>& ranks, int channel) {
  Call call{"GatherStatus", ranks, DType::kInt32, 1};
  const int me = CheckPlacement(call);
  std::vector<int> all(ranks.size(), 0);
  all[me] = status;
  if (ranks.size() == 1) return all;
#ifdef OFL_WITH_MPI
  const MPI_Comm comm = GetComm(call, channel);
  std::unique_lock<std::mutex> lock = SerializeMpi();
  CheckMpi(MPI_Allgather(&status, 1, MPI_INT, all.data(), 1, MPI_INT, comm), "MPI_Allgather",
           &call);
#else
  (void)channel;
#endif
  return all;
}

std::vector<int64_t> GatherWords(const std::vector<int64_t>& mine, const std::vector<int>& ranks,
                                 int channel) {
  Call call{"GatherWords", ranks, DType::kInt64, static_cast<int64_t>(mine.size())};
  const int me = CheckPlacement(call);
  CheckCount(call, "count", call.count);
  std::vector<int64_t> all(ranks.size() * mine.size(), 0);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<ptrdiff_t>(me * mine.size()));
  if (ranks.size() == 1 || mine.empty()) return all;
#ifdef OFL_WITH_MPI
  const MPI_Comm comm = GetComm(call, channel);
  const int n = static_cast<int>(mine.size());
  std::unique_lock<std::mutex> lock = SerializeMpi();
  CheckMpi(MPI_Allgather(mine.data(), n, MPI_INT64_T, all.data(), n, MPI_INT64_T, comm),
           "MPI_Allgather", &call);
#else
  (void)channel;
#endif
  return all;
}

void AllGatherV(const void* send, int64_t send_count, void* recv,
                const std::vector<int64_t>& counts, DType dtype, const std::vector<int>& ranks,
                int channel) {
  Call call{"AllGatherV", ranks, dtype, send_count, "send_count"};
  call.counts = &counts;
  const int me = CheckPlacement(call);
  const int64_t total = CheckCounts(call, "counts", counts);
  if (send_count != counts[me]) {
    throw InvalidArgument(call.Describe() + ": send_count " + std::to_string(send_count) +
                          " differs from counts[" + std::to_string(me) + "]");
  }
  if (ranks.size() == 1) return LocalCopy(recv, send, send_count, dtype);
  if (total == 0) return;  // the counts are the same on every rank: all skip alike
#ifdef OFL_WITH_MPI
  const MPI_Comm comm = GetComm(call, channel);
  const MPI_Datatype type = MoveType(dtype);
  if (AllEqual(counts)) {
    const int n = static_cast<int>(counts[0]);
    std::unique_lock<std::mutex> lock = SerializeMpi();
    return CheckMpi(MPI_Allgather(send, n, type, recv, n, type, comm), "MPI_Allgather", &call);
  }
  const std::vector<int> n = ToInt(counts);
  const std::vector<int> displs = Displacements(counts);
  std::unique_lock<std::mutex> lock = SerializeMpi();
  CheckMpi(MPI_Allgatherv(send, n[me], type, recv, n.data(), displs.data(), type, comm),
           "MPI_Allgatherv", &call);
#endif
}

void AllReduceSum(const void* send, void* recv, int64_t count, DType dtype,
                  const std::vector<int>& ranks, int channel) {
  Call call{"AllReduceSum", ranks, dtype, count};
  CheckPlacement(call);
  CheckCount(call, "count", count);
  if (ranks.size() == 1) return LocalCopy(recv, send, count, dtype);
  if (count == 0) return;
#ifdef OFL_WITH_MPI
  const MPI_Comm comm = GetComm(call, channel);
  const void* in = send == recv ? MPI_IN_PLACE : send;
  std::unique_lock<std::mutex> lock = SerializeMpi();
  CheckMpi(MPI_Allreduce(in, recv, static_cast<int>(count), MoveType(dtype), SumOp(dtype), comm),
           "MPI_Allreduce", &call);
#endif
}

void ReduceScatterSum(const void* send, void* recv, const std::vector<int64_t>& counts, DType dtype,
                      const std::vector<int>& ranks, int channel) {
  Call call{"ReduceScatterSum", ranks, dtype};
  call.counts = &counts;
  const int me = CheckPlacement(call);
  const int64_t total = CheckCounts(call, "counts", counts);
  if (ranks.size() == 1) return LocalCopy(recv, send, counts[me], dtype);
  if (total == 0) return;
#ifdef OFL_WITH_MPI
  const MPI_Comm comm = GetComm(call, channel);
  const MPI_Datatype type = MoveType(dtype);
  const MPI_Op op = SumOp(dtype);
  if (AllEqual(counts)) {
    const int n = static_cast<int>(counts[0]);
    std::unique_lock<std::mutex> lock = SerializeMpi();
    return CheckMpi(MPI_Reduce_scatter_block(send, recv, n, type, op, comm),
                    "MPI_Reduce_scatter_block", &call);
  }
  const std::vector<int> n = ToInt(counts);
  std::unique_lock<std::mutex> lock = SerializeMpi();
  CheckMpi(MPI_Reduce_scatter(send, recv, n.data(), type, op, comm), "MPI_Reduce_scatter", &call);
#endif
}

void AllToAllV(const void* send, const std::vector<int64_t>& send_counts,
               const std::vector<int64_t>& send_displs, void* recv,
               const std::vector<int64_t>& recv_counts, const std::vector<int64_t>& recv_displs,
               DType dtype, const std::vector<int>& ranks, int channel) {
  Call call{"AllToAllV", ranks, dtype};
  call.counts_name = "send_counts";
  call.counts = &send_counts;
  call.recv_counts = &recv_counts;
  const int me = CheckPlacement(call);
  // Displacements need not increase (nor their sum fit); each block's end must be addressable.
  CheckCounts(call, "send_counts", send_counts, false);
  CheckCounts(call, "recv_counts", recv_counts, false);
  CheckCounts(call, "send_displs", send_displs, false);
  CheckCounts(call, "recv_displs", recv_displs, false);
  for (size_t i = 0; i < ranks.size(); ++i) {
    CheckCount(call, "send_displs + send_counts", send_displs[i] + send_counts[i], i);
    CheckCount(call, "recv_displs + recv_counts", recv_displs[i] + recv_counts[i], i);
  }
  if (send_counts[me] != recv_counts[me]) {
    throw InvalidArgument(call.Describe() + ": rank index " + std::to_string(me) +
                          " sends itself " + std::to_string(send_counts[me]) +
                          " element(s) but receives " + std::to_string(recv_counts[me]));
  }
  const size_t es = element_size(dtype);
  if (ranks.size() == 1) {
    return LocalCopy(static_cast<char*>(recv) + recv_displs[me] * es,
                     static_cast<const char*>(send) + send_displs[me] * es, send_counts[me], dtype);
  }
#ifdef OFL_WITH_MPI
  const MPI_Comm comm = GetComm(call, channel);
  const MPI_Datatype type = MoveType(dtype);
  const std::vector<int> sc = ToInt(send_counts), sd = ToInt(send_displs);
  const std::vector<int> rc = ToInt(recv_counts), rd = ToInt(recv_displs);
  std::unique_lock<std::mutex> lock = SerializeMpi();
  CheckMpi(MPI_Alltoallv(send, sc.data(), sd.data(), type, recv, rc.data(), rd.data(), type, comm),
           "MPI_Alltoallv", &call);
#endif
}

void Broadcast(void* buf, int64_t count, DType dtype, int root_index, const std::vector<int>& ranks,
               int channel) {
  Call call{"Broadcast", ranks, dtype, count};
  CheckPlacement(call);
  CheckCount(call, "count", count);
  if (root_index < 0 || root_index >= static_cast<int>(ranks.size())) {
    throw InvalidArgument(call.Describe() + ": root_index " + std::to_string(root_index) +
                          " is not an index into the rank list");
  }
  if (ranks.size() == 1 || count == 0) return;
#ifdef OFL_WITH_MPI
  const MPI_Comm comm = GetComm(call, channel);
  std::unique_lock<std::mutex> lock = SerializeMpi();
  CheckMpi(MPI_Bcast(buf, static_cast<int>(count), MoveType(dtype), root_index, comm), "MPI_Bcast",
           &call);
#endif
}

}  // namespace ofl::kernels::collective
