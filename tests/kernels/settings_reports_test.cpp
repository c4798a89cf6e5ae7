// The settings read below the VM report a bad value as the VM's do (oneflow_lite/settings.h):
// naming the variable and the value, once, and the default is used. OFL_CHECK_COLLECTIVES used to
// take any value but 0 as on; the simulated accelerator's settings read without a list of warnings
// used to drop their reports.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/collective/collectives.h"
#include "kernels/sim/sim_backend.h"
#include "oneflow_lite/settings.h"
#include "tests/common/scoped_env.h"

namespace ofl::kernels {
namespace {

using ::ofl::testing::ScopedEnv;

TEST(SettingsReportsDeathTest, BadCheckCollectivesValueWarnsAndLeavesTheChecksOn) {
  // A fresh process (threadsafe style re-runs this binary): the setting is read once.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ScopedEnv env("OFL_CHECK_COLLECTIVES", "no");
  EXPECT_EXIT(std::exit(collective::CollectiveChecksEnabled() ? 0 : 3),
              ::testing::ExitedWithCode(0),
              "OFL_CHECK_COLLECTIVES='no' is not valid: need an integer from 0 to 1; using 1 "
              "instead");
}

TEST(SettingsReportsTest, SimConfigsOwnDefaultsAreTheTables) {
  const sim::SimConfig c;
  EXPECT_EQ(std::to_string(c.seed), settings::Get("OFL_SIM_SEED").default_value);
  EXPECT_EQ(std::to_string(c.capacity_bytes >> 20),
            settings::Get("OFL_SIM_MEMORY_MB").default_value);
  EXPECT_EQ(std::to_string(c.max_delay_us), settings::Get("OFL_SIM_MAX_DELAY_US").default_value);
}

TEST(SettingsReportsTest, SimSettingsReadWithoutAListAreLogged) {
  ScopedEnv env("OFL_SIM_MEMORY_MB", "0x10");  // a value no other test sets: logged once a process
  ::testing::internal::CaptureStderr();
  const sim::SimConfig c = sim::SimConfigFromEnv();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.capacity_bytes, sim::SimConfig().capacity_bytes);
  EXPECT_NE(err.find("OFL_SIM_MEMORY_MB='0x10' is not valid: need an integer from 1 to 1048576; "
                     "using 256 instead"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace ofl::kernels
