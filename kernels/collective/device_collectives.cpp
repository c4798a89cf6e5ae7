// The table of device collectives (device_collectives.h): filled while the library loads, read
// after.
#include "kernels/collective/device_collectives.h"

#include <algorithm>
#include <array>

#include "kernels/collective/collectives.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::collective {

Device NodeLocalDevice(DeviceType type) {
  const int n = device_count(type);
  return Device(type, n > 0 ? NodeLocalRank() % n : 0);
}

namespace {

struct Entry {
  const DeviceCollectives* collectives = nullptr;
  int listed_at = 0;
};

std::array<Entry, kMaxDeviceTypes>& Table() {
  static std::array<Entry, kMaxDeviceTypes> table{};
  return table;
}

}  // namespace

void DeviceCollectives::AllToAllV(const void*, const std::vector<int64_t>&,
                                  const std::vector<int64_t>&, void*, const std::vector<int64_t>&,
                                  const std::vector<int64_t>&, DType, const std::vector<int>&,
                                  const Device& device, NativeStream) const {
  throw Error("AllToAllV: the collectives of " + device.str() + " have no all-to-all");
}

void RegisterDeviceCollectives(DeviceType type, int listed_at, const DeviceCollectives* entry) {
  Table()[static_cast<int>(type)] = Entry{entry, listed_at};
}

const DeviceCollectives* FindDeviceCollectives(DeviceType type) {
  const int v = static_cast<int>(type);
  if (v < 0 || v >= kMaxDeviceTypes) return nullptr;
  return Table()[v].collectives;
}

std::string DeviceCollectivesDescription() {
  std::vector<Entry> entries;
  for (const Entry& e : Table()) {
    if (e.collectives != nullptr) entries.push_back(e);
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.listed_at < b.listed_at; });
  std::string out;
  for (const Entry& e : entries)
    out += (out.empty() ? "" : ", ") + std::string(e.collectives->description());
  return out;
}

}  // namespace ofl::kernels::collective
