// The process group's state and what its files share, private to kernels/collective: the state
// and lifecycle are in collectives.cpp, the argument checks and the collectives in
// collective_calls.cpp, and MPI's side (types, reductions, communicators, error codes) in
// mpi_transport.cpp, which only a build with MPI compiles.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#ifdef OFL_WITH_MPI
#include <mpi.h>
#endif

#include "kernels/collective/rank_list.h"
#include "oneflow_lite/dtype.h"

namespace ofl::kernels::collective::group {

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
State& GetState();

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
int CheckPlacement(const Call& call);
// MPI-3 counts and displacements are int: refuse what would not fit rather than truncate.
// `what`, with `index` when it is one entry of a list, names the value.
void CheckCount(const Call& call, const char* what, int64_t v, int64_t index = -1);
// One entry per rank, each an int; with `sum`, their sum too (the last displacement of a vector
// collective, and MPI's own total, must fit).
int64_t CheckCounts(const Call& call, const char* what, const std::vector<int64_t>& counts,
                    bool sum = true);
void LocalCopy(void* dst, const void* src, int64_t count, DType dtype);

#ifdef OFL_WITH_MPI
// Equal counts take MPI's non-vector collectives, whose algorithms are the better tuned.
bool AllEqual(const std::vector<int64_t>& v);
// Bool is one byte (0 or 1); the halves move as their bits and are summed by the reductions
// MakeHalfSumOps creates.
MPI_Datatype MoveType(DType dtype);
MPI_Op SumOp(DType dtype);
// The float16 and bfloat16 sums (MPI has no half-precision types), into the state.
void MakeHalfSumOps();
// `call` is null for the process group's own calls.
void CheckMpi(int rc, const char* fn, const Call* call);
// Held around MPI calls when MPI gave MPI_THREAD_SERIALIZED only (with MPI_THREAD_MULTIPLE, an
// empty lock). Serialising blocking collectives of two device workers could deadlock across
// ranks, which is why InitProcessGroup asks for MPI_THREAD_MULTIPLE.
std::unique_lock<std::mutex> SerializeMpi();
std::vector<int> ToInt(const std::vector<int64_t>& v);
std::vector<int> Displacements(const std::vector<int64_t>& counts);
// The communicator of a placement: its ranks in list order, so a rank's index is its rank there.
// Channel 0 is the data collectives'; another channel gets a communicator of its own over the same
// ranks (GatherStatus).
MPI_Comm GetComm(const Call& call, int channel = 0);
#endif

}  // namespace ofl::kernels::collective::group
