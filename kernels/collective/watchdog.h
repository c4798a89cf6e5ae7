// The collective watchdog: when a collective has waited longer than the hang timeout, it finds out
// which ranks have not arrived and reports them, instead of letting the program hang silently.
//
// How it knows: the collective stream marks the collective it is inside (WatchedCollective: its
// sequence number, rank list and fingerprint) and the last one it entered per rank list. A
// watchdog thread per process (started by InitProcessGroup when MPI runs more than one process
// with MPI_THREAD_MULTIPLE) polls a side communicator (a duplicate of MPI_COMM_WORLD) every
// 50 ms. When the marked collective passes its timeout it asks every other member where it is;
// their watchdog threads answer from their own marks, even while their programs are busy or
// asleep. With the answers (or after one more second without them) it writes one report per
// collective: the sequence number, the fingerprint, how long it has waited, the ranks that have
// not arrived (and which collective each of them is in instead), the ranks inside a collective
// with the same number over the same ranks but another fingerprint (programs out of step: both
// ranks and both fingerprints are named), and those that did not answer.
// The collective keeps waiting: a report never abandons a collective its peers may still join.
//
// Nothing of this costs a message while collectives run in time: marking is a mutex and a map
// update on the collective stream; messages flow only after a timeout, or when a rank ends the job
// (NotifyJobFailure).
//
// Invariants (the watchdog thread and the collective stream share the state under one mutex):
// - at most one collective per process is marked at a time (one collective stream per process);
// - the reporter callback runs on the watchdog thread, without the mutex held;
// - StopWatchdog joins the thread before the side communicator is freed and MPI is finalised.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ofl::kernels::collective {

// The same collective on every member of `ranks`: the seq-th collective over that rank list.
struct CollectiveId {
  int64_t seq = -1;
  std::vector<int> ranks;
  std::string fingerprint;  // kind, element type, logical shape, SBPs, placement
};

// Marks this process as inside `id` from construction to destruction. After `timeout_s` seconds
// (0: never) the watchdog reports it, once, through `report` (on the watchdog thread) and in
// WatchdogReports(). Without a running watchdog (one process, no MPI) it only records the mark.
class WatchedCollective {
 public:
  using Reporter = std::function<void(const std::string&)>;
  WatchedCollective(const CollectiveId& id, double timeout_s, Reporter report);
  ~WatchedCollective();
  WatchedCollective(const WatchedCollective&) = delete;
  WatchedCollective& operator=(const WatchedCollective&) = delete;
};

// What the watchdog knows about `id` while it runs ("" when `id` is not the marked collective):
// how long it has waited and, once a report exists, the report. For hang reports.
std::string WatchdogStatus(const CollectiveId& id);

// Every report written so far in this process, oldest first.
std::vector<std::string> WatchdogReports();

// Whether the watchdog thread runs (MPI with more than one process and MPI_THREAD_MULTIPLE).
bool WatchdogRunning();

// This rank is about to end the whole job (AbortJob, collectives.h): the watchdog thread tells
// every other rank's watchdog, which logs an error naming this rank and `why` (so every rank's
// output says which rank ended the job, and why) and confirms. Returns once every other rank
// confirmed or after `grace_s` seconds; at once without a running watchdog.
void NotifyJobFailure(const std::string& why, double grace_s);

// Called by InitProcessGroup after MPI is up (the side communicator is a collective duplicate of
// MPI_COMM_WORLD, so every rank calls it) and by FinalizeProcessGroup before MPI is finalised.
void StartWatchdog();
void StopWatchdog();

}  // namespace ofl::kernels::collective
