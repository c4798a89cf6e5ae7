// Tests the VM's environment settings (vm/vm_config.h): every bad value (not a number, out of
// range, a low-water mark not below the high one) is reported once with the variable's name and
// value, and the default is used; good values are taken as they are. The death tests start a fresh
// process with a bad value to see the warning come out and every op still work. The settings do
// not depend on the device, so these tests stay on the CPU whatever OFL_TEST_DEVICE says. The
// ranges and defaults come from the table of settings (tests/core/settings_test.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/settings.h"
#include "tests/common/scoped_env.h"
#include "tests/vm/vm_test_util.h"
#include "vm/log.h"
#include "vm/vm_config.h"

namespace ofl::vm {
namespace {

using testing::Contains;

struct Parsed {
  VmConfig config;
  std::vector<std::string> warnings;
};

Parsed Parse(const std::map<std::string, std::string>& env) {
  Parsed p;
  p.config = ReadVmConfig(
      [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      &p.warnings);
  return p;
}

TEST(VmConfigTest, NothingSetGivesTheDefaultsWithoutWarnings) {
  const Parsed p = Parse({});
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_FALSE(p.config.sync_mode);
  EXPECT_EQ(p.config.high_water, 16384);
  EXPECT_EQ(p.config.low_water, 8192);
  EXPECT_EQ(p.config.spin_us, 50);
  EXPECT_DOUBLE_EQ(p.config.wait_timeout_s, 300);
  EXPECT_TRUE(p.config.fold_releases);
  EXPECT_EQ(p.config.exit_stall_ms, 2000);
  EXPECT_EQ(p.config.inline_bytes, 32768);
}

TEST(VmConfigTest, GoodValuesAreTaken) {
  const Parsed p = Parse({{"OFL_VM_SYNC", "1"},
                          {"OFL_VM_HIGH_WATER_MARK", "100"},
                          {"OFL_VM_LOW_WATER_MARK", "10"},
                          {"OFL_VM_TIMEOUT_SECONDS", "2.5"},
                          {"OFL_VM_SPIN_US", "0"},
                          {"OFL_VM_FOLD_RELEASE", "0"},
                          {"OFL_VM_EXIT_STALL_MS", "5"},
                          {"OFL_VM_INLINE_BYTES", "0"},
                          {"OFL_TRACE", "/tmp/t.json"}});
  EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
  EXPECT_TRUE(p.config.sync_mode);
  EXPECT_EQ(p.config.high_water, 100);
  EXPECT_EQ(p.config.low_water, 10);
  EXPECT_DOUBLE_EQ(p.config.wait_timeout_s, 2.5);
  EXPECT_EQ(p.config.spin_us, 0);
  EXPECT_FALSE(p.config.fold_releases);
  EXPECT_EQ(p.config.exit_stall_ms, 5);
  EXPECT_EQ(p.config.inline_bytes, 0);
  EXPECT_EQ(p.config.trace_path, "/tmp/t.json");
  // Without a low mark, the low mark is half the high one.
  EXPECT_EQ(Parse({{"OFL_VM_HIGH_WATER_MARK", "100"}}).config.low_water, 50);
}

TEST(VmConfigTest, EachBadValueIsReportedWithItsNameAndValueAndTheDefaultIsUsed) {
  struct Case {
    std::string name, value, want_in_message;
  };
  const std::vector<Case> cases = {
      {"OFL_VM_HIGH_WATER_MARK", "1", "from 2 to 65536"},
      {"OFL_VM_HIGH_WATER_MARK", "abc", "an integer"},
      {"OFL_VM_HIGH_WATER_MARK", "99999999999999999999", "an integer"},
      {"OFL_VM_HIGH_WATER_MARK", "70000", "from 2 to 65536"},
      {"OFL_VM_LOW_WATER_MARK", "0", "an integer"},
      {"OFL_VM_SYNC", "yes", "from 0 to 1"},
      {"OFL_VM_SPIN_US", "-3", "from 0 to 1000000"},
      {"OFL_VM_TIMEOUT_SECONDS", "abc", "finite number"},
      {"OFL_VM_TIMEOUT_SECONDS", "inf", "finite number"},
      {"OFL_VM_FOLD_RELEASE", "2", "from 0 to 1"},
      {"OFL_TRACE_VM", "on", "from 0 to 1"},
      {"OFL_VM_EXIT_STALL_MS", "0", "from 1 to"},
      {"OFL_VM_INLINE_BYTES", "-1", "from 0 to 1099511627776"},
  };
  const VmConfig defaults;
  for (const Case& c : cases) {
    const Parsed p = Parse({{c.name, c.value}});
    ASSERT_EQ(p.warnings.size(), 1u) << c.name << "=" << c.value;
    const std::string& w = p.warnings[0];
    EXPECT_TRUE(Contains(w, c.name + "='" + c.value + "' is not valid")) << w;
    EXPECT_TRUE(Contains(w, c.want_in_message)) << w;
    EXPECT_TRUE(Contains(w, "using")) << w;
    EXPECT_EQ(p.config.high_water, defaults.high_water) << w;
    EXPECT_EQ(p.config.low_water, defaults.low_water) << w;
    EXPECT_DOUBLE_EQ(p.config.wait_timeout_s, defaults.wait_timeout_s) << w;
    EXPECT_EQ(p.config.sync_mode, defaults.sync_mode) << w;
  }
}

TEST(VmConfigTest, LowMarkNotBelowTheHighMarkFallsBackToHalfTheHighMark) {
  const Parsed p = Parse({{"OFL_VM_HIGH_WATER_MARK", "64"}, {"OFL_VM_LOW_WATER_MARK", "64"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_TRUE(Contains(p.warnings[0], "OFL_VM_LOW_WATER_MARK='64' is not valid")) << p.warnings[0];
  EXPECT_TRUE(Contains(p.warnings[0], "below the high-water mark 64")) << p.warnings[0];
  EXPECT_EQ(p.config.high_water, 64);
  EXPECT_EQ(p.config.low_water, 32);
}

TEST(VmConfigDeathTest, BadValueInTheEnvironmentWarnsOnceAndOpsStillWork) {
  // A fresh process (threadsafe style re-runs this binary) so that the VM starts under the value.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("OFL_VM_HIGH_WATER_MARK", "1", 1);
  EXPECT_EXIT(
      {
        for (int i = 0; i < 3; ++i) {
          const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu")).repeat({2});
          if (x.to_vector<float>() != std::vector<float>{1, 2, 1, 2}) std::exit(3);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "OFL_VM_HIGH_WATER_MARK='1' is not valid: need an integer from 2 to 65536; using 16384");
  unsetenv("OFL_VM_HIGH_WATER_MARK");
}

TEST(VmConfigTest, TheTableOfSettingsHoldsTheVmsLimitsAndDefaults) {
  EXPECT_EQ(settings::Get("OFL_VM_HIGH_WATER_MARK").hi, kMaxHighWater);
  EXPECT_EQ(settings::Get("OFL_VM_LOW_WATER_MARK").hi, kMaxHighWater - 1);
  // VmConfig's own initialisers (what the tests above compare with) are the table's defaults.
  const VmConfig table = Parse({}).config;
  const VmConfig own;
  EXPECT_EQ(table.sync_mode, own.sync_mode);
  EXPECT_EQ(table.spin_us, own.spin_us);
  EXPECT_EQ(table.high_water, own.high_water);
  EXPECT_EQ(table.low_water, own.low_water);
  EXPECT_DOUBLE_EQ(table.wait_timeout_s, own.wait_timeout_s);
  EXPECT_EQ(table.fold_releases, own.fold_releases);
  EXPECT_EQ(table.trace_vm, own.trace_vm);
  EXPECT_EQ(table.trace_path, own.trace_path);
  EXPECT_EQ(table.exit_stall_ms, own.exit_stall_ms);
  EXPECT_EQ(table.inline_bytes, own.inline_bytes);
}

// An unknown OFL_LOG_LEVEL used to switch logging off without a word (spdlog's from_str); it is now
// reported through the logger, which keeps its default level, warn.
TEST(VmConfigDeathTest, BadLogLevelIsReportedAndTheDefaultLevelUsed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ::ofl::testing::ScopedEnv env("OFL_LOG_LEVEL", "verbose");
  EXPECT_EXIT(
      {
        const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu")).repeat({2});
        if (x.to_vector<float>() != std::vector<float>{1, 2, 1, 2}) std::exit(3);
        std::exit(Logger().level() == spdlog::level::warn ? 0 : 4);
      },
      ::testing::ExitedWithCode(0),
      "OFL_LOG_LEVEL='verbose' is not valid: need one of trace, debug, info, warn, warning, error, "
      "err, critical, off; using warn instead");
}

}  // namespace
}  // namespace ofl::vm
