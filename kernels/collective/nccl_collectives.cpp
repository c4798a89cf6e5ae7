// NCCL collectives (nccl_collectives.h). A one-rank placement goes through NCCL too (a one-rank
// communicator), so one GPU exercises every code path. Communicators are made on first use per
// (rank list, device), on the collective stream's worker thread: the list's first rank makes the
// unique id and broadcasts it over MPI (collectives.h), then every member joins with
// ncclCommInitRank. Every member reaches that point in the same collective (the same program
// order), so the MPI broadcast and the NCCL init cannot interleave differently on different ranks.
#include "kernels/collective/nccl_collectives.h"

#include <string>

#include "oneflow_lite/error.h"

#ifdef OFL_WITH_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <map>
#include <mutex>
#include <utility>

#include "kernels/collective/collectives.h"
#include "kernels/collective/rank_list.h"
#endif

namespace ofl::kernels::collective {

#ifdef OFL_WITH_NCCL
namespace {

struct Comms {
  std::mutex mu;
  std::map<std::pair<std::vector<int>, int>, ncclComm_t> by_key;
};

Comms& GetComms() {
  static Comms* c = new Comms();  // never destroyed: FinalizeNccl frees the communicators
  return *c;
}

std::string Where(const char* name, const std::vector<int>& ranks, int device) {
  return std::string(name) + " over ranks " + Join(ranks) + " on cuda:" + std::to_string(device);
}

void CheckNccl(ncclResult_t rc, const char* call, const std::string& where, ncclComm_t comm) {
  if (rc == ncclSuccess) return;
  std::string msg = where + ": " + call + " failed: " + ncclGetErrorString(rc);
  if (comm != nullptr) {
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') msg += " (" + std::string(last) + ")";
  }
  throw Error(msg);
}

void CheckCuda(cudaError_t rc, const char* call, const std::string& where) {
  if (rc == cudaSuccess) return;
  (void)cudaGetLastError();
  throw DeviceError(where + ": " + call + " failed: " + cudaGetErrorName(rc) + ": " +
                    cudaGetErrorString(rc));
}

int IndexOf(const std::vector<int>& ranks, const std::string& where) {
  const int me = WorldRank();
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == me) return static_cast<int>(i);
  }
  throw InvalidArgument(where + ": this process (rank " + std::to_string(me) +
                        ") is not in the placement");
}

ncclComm_t GetComm(const std::vector<int>& ranks, int device, const std::string& where) {
  Comms& c = GetComms();
  std::lock_guard<std::mutex> lock(c.mu);  // one collective stream per device: no contention
  auto it = c.by_key.find({ranks, device});
  if (it != c.by_key.end()) return it->second;
  const int me = IndexOf(ranks, where);
  ncclUniqueId id;
  if (me == 0) CheckNccl(ncclGetUniqueId(&id), "ncclGetUniqueId", where, nullptr);
  Broadcast(&id, sizeof(id), DType::kUInt8, 0, ranks);  // over MPI, host memory
  CheckCuda(cudaSetDevice(device), "cudaSetDevice", where);
  ncclComm_t comm = nullptr;
  CheckNccl(ncclCommInitRank(&comm, static_cast<int>(ranks.size()), id, me), "ncclCommInitRank",
            where, nullptr);
  c.by_key.emplace(std::make_pair(ranks, device), comm);
  return comm;
}

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
  const std::string where = Where("NcclAllGatherV", ranks, device);
  CheckCounts(counts, ranks, where);
  const int me = IndexOf(ranks, where);
  if (send_count != counts[me]) {
    throw InvalidArgument(where + ": send_count " + std::to_string(send_count) +
                          " differs from counts[" + std::to_string(me) + "]");
  }
  const auto s = static_cast<cudaStream_t>(stream);
  auto* out = static_cast<char*>(recv);
  ncclComm_t comm = GetComm(ranks, device, where);
  if (AllEqual(counts)) {
    CheckNccl(ncclAllGather(send, recv, Bytes(counts[0], dtype), ncclUint8, comm, s),
              "ncclAllGather", where, comm);
    return;
  }
  // Uneven: each rank broadcasts its piece into its place; no padding moves.
  CheckNccl(ncclGroupStart(), "ncclGroupStart", where, comm);
  size_t at = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const void* src = static_cast<int>(r) == me ? send : out + at;
    const ncclResult_t rc = ncclBroadcast(src, out + at, Bytes(counts[r], dtype), ncclUint8,
                                          static_cast<int>(r), comm, s);
    if (rc != ncclSuccess) {
      (void)ncclGroupEnd();
      CheckNccl(rc, "ncclBroadcast", where, comm);
    }
    at += Bytes(counts[r], dtype);
  }
  CheckNccl(ncclGroupEnd(), "ncclGroupEnd", where, comm);
}

void NcclAllReduceSum(const void* send, void* recv, int64_t count, DType dtype,
                      const std::vector<int>& ranks, int device, void* stream) {
  const std::string where = Where("NcclAllReduceSum", ranks, device);
  NcclCheckSum(where.c_str(), dtype);
  const auto s = static_cast<cudaStream_t>(stream);
  ncclComm_t comm = GetComm(ranks, device, where);
  const auto [type, op] = SumType(dtype);
  CheckNccl(ncclAllReduce(send, recv, static_cast<size_t>(count), type, op, comm, s),
            "ncclAllReduce", where, comm);
}

void NcclReduceScatterSum(const void* send, void* recv, const std::vector<int64_t>& counts,
                          DType dtype, const std::vector<int>& ranks, int device, void* stream) {
  const std::string where = Where("NcclReduceScatterSum", ranks, device);
  NcclCheckSum(where.c_str(), dtype);
  CheckCounts(counts, ranks, where);
  const int me = IndexOf(ranks, where);
  const auto s = static_cast<cudaStream_t>(stream);
  ncclComm_t comm = GetComm(ranks, device, where);
  const auto [type, op] = SumType(dtype);
  if (AllEqual(counts)) {
    CheckNccl(ncclReduceScatter(send, recv, static_cast<size_t>(counts[0]), type, op, comm, s),
              "ncclReduceScatter", where, comm);
    return;
  }
  // Uneven: one reduce per rank, each to the rank that keeps that slice.
  const auto* in = static_cast<const char*>(send);
  CheckNccl(ncclGroupStart(), "ncclGroupStart", where, comm);
  size_t at = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const ncclResult_t rc = ncclReduce(in + at, recv, static_cast<size_t>(counts[r]), type, op,
                                       static_cast<int>(r), comm, s);
    if (rc != ncclSuccess) {
      (void)ncclGroupEnd();
      CheckNccl(rc, "ncclReduce", where, comm);
    }
    at += Bytes(counts[r], dtype);
  }
  CheckNccl(ncclGroupEnd(), "ncclGroupEnd", where, comm);
  (void)me;
}

void NcclBroadcast(void* buf, const void* root_src, int64_t count, DType dtype, int root_index,
                   const std::vector<int>& ranks, int device, void* stream) {
  const std::string where = Where("NcclBroadcast", ranks, device);
  const int me = IndexOf(ranks, where);
  const auto s = static_cast<cudaStream_t>(stream);
  if (me == root_index && root_src != nullptr && root_src != buf && count > 0) {
    CheckCuda(cudaMemcpyAsync(buf, root_src, Bytes(count, dtype), cudaMemcpyDeviceToDevice, s),
              "cudaMemcpyAsync", where);
  }
  ncclComm_t comm = GetComm(ranks, device, where);
  CheckNccl(ncclBroadcast(buf, buf, Bytes(count, dtype), ncclUint8, root_index, comm, s),
            "ncclBroadcast", where, comm);
}

void FinalizeNccl() {
  Comms& c = GetComms();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& entry : c.by_key) (void)ncclCommDestroy(entry.second);
  c.by_key.clear();
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
