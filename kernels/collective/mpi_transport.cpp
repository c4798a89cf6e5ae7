// MPI's side of the process group's collectives (see process_group.h): the types and reductions
// a DType moves with, MPI's error codes as ofl errors, the serialisation of calls under
// MPI_THREAD_SERIALIZED, and the communicator of each placement. Compiled only in a build with
// MPI (cmake/Layers.cmake).
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/collective/process_group.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::collective::group {

namespace {

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

std::string MpiErrorString(int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(rc);
  return std::string(msg, len);
}

}  // namespace

bool AllEqual(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x != v[0]) return false;
  }
  return true;
}

MPI_Datatype MoveType(DType dtype) {
  static_assert(kNumDTypes == 10, "a DType without an MPI type");
  const MPI_Datatype types[kNumDTypes] = {MPI_UINT8_T, MPI_UINT8_T, MPI_INT8_T,   MPI_INT16_T,
                                          MPI_INT32_T, MPI_INT64_T, MPI_UINT16_T, MPI_UINT16_T,
                                          MPI_FLOAT,   MPI_DOUBLE};  // in DType order
  return types[static_cast<int>(dtype)];
}

MPI_Op SumOp(DType dtype) {
  // MPI_LOR is defined on MPI_UINT8_T and yields 0 or 1: the clamped bool sum.
  if (dtype == DType::kBool) return MPI_LOR;
  if (dtype == DType::kFloat16) return GetState().float16_sum;
  if (dtype == DType::kBFloat16) return GetState().bfloat16_sum;
  return MPI_SUM;
}

void MakeHalfSumOps() {
  State& s = GetState();
  if (s.float16_sum == MPI_OP_NULL) {
    CheckMpi(MPI_Op_create(&HalfSum<float16>, 1, &s.float16_sum), "MPI_Op_create", nullptr);
  }
  if (s.bfloat16_sum == MPI_OP_NULL) {
    CheckMpi(MPI_Op_create(&HalfSum<bfloat16>, 1, &s.bfloat16_sum), "MPI_Op_create", nullptr);
  }
}

void CheckMpi(int rc, const char* fn, const Call* call) {
  if (rc == MPI_SUCCESS) return;
  const std::string where = call ? call->Describe() : std::string("InitProcessGroup");
  throw Error(where + ": " + fn + " failed: " + MpiErrorString(rc));
}

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

MPI_Comm GetComm(const Call& call, int channel) {
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

}  // namespace ofl::kernels::collective::group
