#include "vm/back_pressure.h"

#include "oneflow_lite/error.h"
#include "vm/stream.h"
#include "vm/vm_config.h"

namespace ofl::vm {

void BackPressure::CheckMarks(int64_t high, int64_t low) {
  static_assert(kMaxHighWater <= static_cast<int64_t>(Stream::kRingCapacity / 2),
                "a stream's ring must never fill");
  const int64_t max_high = kMaxHighWater;
  if (high <= 0 || low <= 0 || low >= high || high > max_high) {
    throw InvalidArgument("set_water_marks: need 0 < low < high <= " + std::to_string(max_high) +
                          ", got high=" + std::to_string(high) + " low=" + std::to_string(low));
  }
}

std::string BackPressure::Describe() const {
  return std::to_string(Pending()) + " instruction(s) in flight, high-water mark " +
         std::to_string(high_water_.load()) + ", resumes at " + std::to_string(low_water_.load());
}

}  // namespace ofl::vm
