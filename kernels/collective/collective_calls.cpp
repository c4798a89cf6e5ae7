// The collectives of collectives.h. Every argument is checked before the first message, and the
// checks that depend only on what all ranks pass alike (the placement, the shared counts) come
// first, so that a bad call throws on every rank instead of leaving the others waiting inside a
// collective. MPI carries them when the library is built with it (OFL_WITH_MPI); a one-rank
// placement, or the one-process world without MPI, is a local copy.
#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/collective/collectives.h"
#include "kernels/collective/process_group.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::collective {

namespace group {

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

void CheckCount(const Call& call, const char* what, int64_t v, int64_t index) {
  if (v >= 0 && v <= INT_MAX) return;
  const std::string name = std::string(what) +
                           (index >= 0 ? "[" + std::to_string(index) + "]" : "") + " " +
                           std::to_string(v);
  if (v < 0) throw InvalidArgument(call.Describe() + ": " + name + " is negative");
  throw Error(call.Describe() + ": " + name +
              " is above INT_MAX (2147483647), the most elements an MPI-3 count addresses");
}

int64_t CheckCounts(const Call& call, const char* what, const std::vector<int64_t>& counts,
                    bool sum) {
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

}  // namespace group

using namespace group;  // NOLINT(google-build-using-namespace): the process group's own parts

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
