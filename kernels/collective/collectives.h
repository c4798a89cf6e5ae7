// The process group and the collectives that global tensors are built on: MPI (OpenMPI from
// Debian) for CPU tensors. Host buffers only; blocking calls, made by the one collective stream
// worker of each device (vm/), so the collectives of a process run in issue order. Without MPI
// (built with OFL_WITH_MPI=OFF, or a program not launched by mpiexec) the world is one process:
// rank 0 of 1, and every collective over the placement {0} is a local copy (that is exactly what it
// computes on one rank), not a stub.
//
// Every function takes the placement's ranks (world ranks, in parallel-index order); a rank calls
// it only when it is in that list. Counts and displacements are in elements of `dtype`. Sums are
// exact for integers, in the element type for float32/float64, through float32 for float16 and
// bfloat16 (rounded once per step), and logical OR for bool (a bool sum clamps, as in PyTorch).
// Errors (an MPI failure, a count above what MPI can address) throw ofl::Error naming the
// collective, the ranks and the counts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"

namespace ofl::kernels::collective {

// Initialises MPI (MPI_THREAD_MULTIPLE) unless the program already did; idempotent. Without MPI
// built in, or outside mpiexec, a no-op that leaves the world at one process.
// With more than one process it also makes OFL_CHECK_COLLECTIVES world-wide (see
// CollectiveChecksEnabled) and hooks MPI_Finalize: a program that calls MPI_Finalize before
// ofl::shutdown gets, inside its MPI_Finalize (an attribute-delete callback on MPI_COMM_SELF, which
// MPI runs before it tears anything down), the before-finalize hook (the VM lets the collectives
// issued so far run), then the teardown of FinalizeProcessGroup without a second MPI_Finalize.
// Collectives afterwards throw Error naming the program's MPI_Finalize.
void InitProcessGroup();
bool ProcessGroupInitialized();
// This process's world rank and the world size: 0 and 1 before InitProcessGroup or without MPI.
int WorldRank();
int WorldSize();
// This process's rank on its node (OMPI_COMM_WORLD_LOCAL_RANK, MPI's own variable; the world rank
// without it): the device entries pick each rank's device by it (its GPU, its sim device).
int NodeLocalRank();
// Frees the communicators and, when InitProcessGroup initialised MPI, finalises it. Idempotent;
// collectives afterwards throw Error. Called by ofl::shutdown after the streams stopped.
void FinalizeProcessGroup();
// Whether the library was built with MPI (false: one-process world).
bool BuiltWithMpi();
// Ends the whole job because this rank cannot go on (a program that ends with an uncaught
// exception while the other ranks may wait for it in a collective: finalising MPI would then wait
// for them forever). Logs `why` as an error naming this rank, tells the other ranks (each logs
// which rank ended the job and why: NotifyJobFailure, watchdog.h), gives them up to `grace_s`
// seconds to confirm, then calls MPI_Abort(MPI_COMM_WORLD, 1). Returns without doing anything when
// there is no job to end: one process, no MPI, a group not started or already finalized.
void AbortJob(const std::string& why, double grace_s = 2.0);

// Run inside the program's MPI_Finalize before the process group is torn down (see
// InitProcessGroup); set once by the layer that issues collectives
// (oneflow_lite/functional/collective_policy.cpp).
void SetBeforeMpiFinalizeHook(std::function<void()> hook);

// Whether collectives are checked for order and fingerprint (OFL_CHECK_COLLECTIVES, on unless
// set to 0). Before InitProcessGroup (and in a one-process world) it is this process's own
// setting; InitProcessGroup makes it the same on every rank: on when any rank has it on.
bool CollectiveChecksEnabled();
// Overrides the setting, for benchmarks that time a collective with and without the check in one
// run. Every rank must make the same call at the same point of its program, with no collective in
// flight: the check changes what the agreement before each collective exchanges.
void SetCollectiveChecks(bool on);
// The world-wide decision from every rank's own setting (per_rank[r]: rank r has it on): `on` for
// every rank, and a warning (the same on every rank; empty when all agree) naming the ranks that
// set it and those that did not.
struct CollectiveChecksSetting {
  bool on = false;
  std::string warning;
};
CollectiveChecksSetting AgreeOnCollectiveChecks(const std::vector<int>& per_rank);

// Every member of `ranks` passes a status (0: it can take part in the collective that follows;
// any other value a code of the caller's); returns every member's status in list order, the same
// list on every member. `channel` keeps apart threads that exchange statuses over the same ranks
// at the same time (each stream that runs collectives uses its own): each channel has its own
// communicator. One member: {status}, with no message.
std::vector<int> GatherStatus(int status, const std::vector<int>& ranks, int channel);
// The same with `mine.size()` int64 words per member (the same count on every member): returns
// every member's words, member after member in list order.
std::vector<int64_t> GatherWords(const std::vector<int64_t>& mine, const std::vector<int>& ranks,
                                 int channel);

// The channel of the collective streams of a device type: 0 for the CPU's (the data collectives'
// own communicators), the type's number for another type (cuda 1, sim 2), whose collective
// stream's worker makes its MPI calls (status exchanges, NCCL's set-up, OFL_CHECK_COLLECTIVES's
// check, the sim's staged data) on communicators of its own. By type, not by device: the ranks of
// a placement use devices of different indices (each its node-local one), and must meet on the
// same communicator; a process uses one device of each type for its placements.
inline int CollectiveChannel(DeviceType type) { return static_cast<int>(type); }
inline int CollectiveChannel(const Device& device) { return CollectiveChannel(device.type()); }

// recv (sum(counts) elements) = the concatenation over ranks of each rank's `send`
// (counts[i] elements from ranks[i]); send_count must equal counts[my index]. `channel` as for
// GatherStatus (0: the data collectives').
void AllGatherV(const void* send, int64_t send_count, void* recv,
                const std::vector<int64_t>& counts, DType dtype, const std::vector<int>& ranks,
                int channel = 0);
// recv (count elements) = the element-wise sum over ranks of `send`. send == recv is allowed.
// `channel` here and below as for AllGatherV.
void AllReduceSum(const void* send, void* recv, int64_t count, DType dtype,
                  const std::vector<int>& ranks, int channel = 0);
// The element-wise sum over ranks of `send` (sum(counts) elements), of which this rank receives
// the slice [sum(counts[0..i)), +counts[i]) into recv, i = its index.
void ReduceScatterSum(const void* send, void* recv, const std::vector<int64_t>& counts, DType dtype,
                      const std::vector<int>& ranks, int channel = 0);
// MPI_Alltoallv: send_counts[j] elements from send + send_displs[j] go to ranks[j], which
// receives them at recv + recv_displs[i] (recv_counts[i] elements from ranks[i]).
void AllToAllV(const void* send, const std::vector<int64_t>& send_counts,
               const std::vector<int64_t>& send_displs, void* recv,
               const std::vector<int64_t>& recv_counts, const std::vector<int64_t>& recv_displs,
               DType dtype, const std::vector<int>& ranks, int channel = 0);
// buf (count elements) on every rank = buf of ranks[root_index].
void Broadcast(void* buf, int64_t count, DType dtype, int root_index, const std::vector<int>& ranks,
               int channel = 0);

}  // namespace ofl::kernels::collective
