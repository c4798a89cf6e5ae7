// Linked into every test program: a suite run on a device this machine does not have
// (OFL_TEST_DEVICE=cuda:0 where no GPU is present, or in a build without CUDA) skips every test
// with the reason, instead of failing each one. CTest reports such a run as skipped
// (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "oneflow_lite/device.h"
#include "oneflow_lite/settings.h"

namespace {

class DeviceAvailability : public ::testing::Environment {
 public:
  void SetUp() override {
    const std::string spec = ofl::settings::String("OFL_TEST_DEVICE");
    const ofl::Device device(spec);
    const int count = ofl::device_count(device.type());
    if (device.index() < count) return;
    std::string why = ofl::device_unavailable_reason(device.type());
    if (why.empty()) why = "only " + std::to_string(count) + " device(s) of this type";
    GTEST_SKIP() << "OFL_TEST_DEVICE=" << spec << " is not available here: " << why;
  }
};

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new DeviceAvailability);

}  // namespace
