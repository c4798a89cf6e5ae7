// The table of settings' getters (oneflow_lite/settings.h): unset or empty gives the default,
// good values are taken, and every bad value, whatever the type, is reported once naming the
// variable, the value and what is accepted, with the default used instead. Reports go to the
// caller's list, or without one to the log, each at most once per process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "oneflow_lite/settings.h"
#include "tests/common/scoped_env.h"

namespace ofl::settings {
namespace {

struct Env {
  std::map<std::string, std::string> values;
  std::vector<std::string> warnings;
  Reader reader() {
    return Reader(
        [this](const char* name) -> const char* {
          auto it = values.find(name);
          return it == values.end() ? nullptr : it->second.c_str();
        },
        &warnings);
  }
};

TEST(SettingsTest, UnsetOrEmptyGivesTheDefault) {
  Env env;
  EXPECT_FALSE(env.reader().Flag("OFL_DISABLE_VIEW"));
  EXPECT_TRUE(env.reader().Flag("OFL_VM_FOLD_RELEASE"));
  EXPECT_EQ(env.reader().Int("OFL_SIM_SEED"), 12345);
  EXPECT_DOUBLE_EQ(env.reader().Number("OFL_VM_TIMEOUT_SECONDS"), 300);
  EXPECT_EQ(env.reader().String("OFL_LOG_LEVEL"), "warn");
  EXPECT_EQ(env.reader().String("OFL_TRACE"), "");
  env.values = {{"OFL_CHECK_COLLECTIVES", ""}, {"OFL_LOG_LEVEL", ""}, {"OFL_SIM_MEMORY_MB", ""}};
  EXPECT_TRUE(env.reader().Flag("OFL_CHECK_COLLECTIVES"));
  EXPECT_EQ(env.reader().String("OFL_LOG_LEVEL"), "warn");
  EXPECT_EQ(env.reader().Int("OFL_SIM_MEMORY_MB"), 256);
  EXPECT_TRUE(env.warnings.empty()) << env.warnings.front();
}

TEST(SettingsTest, GoodValuesAreTaken) {
  Env env;
  env.values = {{"OFL_DISABLE_VIEW", "1"},        {"OFL_CHECK_COLLECTIVES", "0"},
                {"OFL_LOG_LEVEL", "debug"},       {"OFL_SIM_SEED", "-7"},
                {"OFL_SIM_MEMORY_MB", "1048576"}, {"OFL_VM_TIMEOUT_SECONDS", "-1.5"},
                {"OFL_TRACE", "/tmp/t.json"}};
  EXPECT_TRUE(env.reader().Flag("OFL_DISABLE_VIEW"));
  EXPECT_FALSE(env.reader().Flag("OFL_CHECK_COLLECTIVES"));
  EXPECT_EQ(env.reader().String("OFL_LOG_LEVEL"), "debug");
  EXPECT_EQ(env.reader().Int("OFL_SIM_SEED"), -7);
  EXPECT_EQ(env.reader().Int("OFL_SIM_MEMORY_MB"), 1048576);
  EXPECT_DOUBLE_EQ(env.reader().Number("OFL_VM_TIMEOUT_SECONDS"), -1.5);
  EXPECT_EQ(env.reader().String("OFL_TRACE"), "/tmp/t.json");
  for (const char* level : {"trace", "info", "warning", "error", "err", "critical", "off"}) {
    env.values["OFL_LOG_LEVEL"] = level;
    EXPECT_EQ(env.reader().String("OFL_LOG_LEVEL"), level);
  }
  EXPECT_TRUE(env.warnings.empty()) << env.warnings.front();
}

// The values that the switches read without the table used to ignore silently (a flag other than
// 0 or 1 was on, or off; an unknown log level turned logging off) are now reported like the VM's.
TEST(SettingsTest, EachBadValueIsReportedOnceWithTheVariableTheValueAndTheDefault) {
  struct Case {
    std::string name, value, message;
  };
  const std::vector<Case> cases = {
      {"OFL_DISABLE_VIEW", "yes",
       "OFL_DISABLE_VIEW='yes' is not valid: need an integer from 0 to 1; using 0 instead"},
      {"OFL_CHECK_COLLECTIVES", "2",
       "OFL_CHECK_COLLECTIVES='2' is not valid: need an integer from 0 to 1; using 1 instead"},
      {"OFL_CUDA_HOST_WIDE_INDEX", "true",
       "OFL_CUDA_HOST_WIDE_INDEX='true' is not valid: need an integer from 0 to 1; using 0 "
       "instead"},
      {"OFL_LOG_LEVEL", "verbose",
       "OFL_LOG_LEVEL='verbose' is not valid: need one of trace, debug, info, warn, warning, "
       "error, err, critical, off; using warn instead"},
      {"OFL_LOG_LEVEL", "DEBUG",
       "OFL_LOG_LEVEL='DEBUG' is not valid: need one of trace, debug, info, warn, warning, error, "
       "err, critical, off; using warn instead"},
      {"OFL_SIM_SEED", "12x",
       "OFL_SIM_SEED='12x' is not valid: need an integer from -9223372036854775808 to "
       "9223372036854775807; using 12345 instead"},
      {"OFL_SIM_SEED", "99999999999999999999",
       "OFL_SIM_SEED='99999999999999999999' is not valid: need an integer from "
       "-9223372036854775808 to 9223372036854775807; using 12345 instead"},
      {"OFL_SIM_MAX_DELAY_US", "2147483648",
       "OFL_SIM_MAX_DELAY_US='2147483648' is not valid: need an integer from 0 to 2147483647; "
       "using 200 instead"},
      {"OFL_VM_TIMEOUT_SECONDS", "nan",
       "OFL_VM_TIMEOUT_SECONDS='nan' is not valid: need a finite number of seconds (<= 0: wait "
       "forever); using 300 instead"},
  };
  for (const Case& c : cases) {
    Env env;
    env.values[c.name] = c.value;
    const Reader r = env.reader();
    const Setting& s = Get(c.name);
    switch (s.type) {
      case Type::kFlag:
        EXPECT_EQ(r.Flag(c.name.c_str()), std::string(s.default_value) == "1") << c.name;
        break;
      case Type::kInteger:
        EXPECT_EQ(std::to_string(r.Int(c.name.c_str())), s.default_value) << c.name;
        break;
      case Type::kNumber:
        EXPECT_DOUBLE_EQ(r.Number(c.name.c_str()), 300) << c.name;
        break;
      case Type::kString:
      case Type::kLogLevel:
        EXPECT_EQ(r.String(c.name.c_str()), s.default_value) << c.name;
        break;
    }
    ASSERT_EQ(env.warnings.size(), 1u) << c.name << "=" << c.value;
    EXPECT_EQ(env.warnings[0], c.message);
  }
}

TEST(SettingsTest, ACallersFallbackReplacesTheDefault) {
  Env env;
  EXPECT_EQ(env.reader().Int("OFL_VM_LOW_WATER_MARK", 50), 50);
  env.values["OFL_VM_LOW_WATER_MARK"] = "0";
  EXPECT_EQ(env.reader().Int("OFL_VM_LOW_WATER_MARK", 50), 50);
  ASSERT_EQ(env.warnings.size(), 1u);
  EXPECT_EQ(env.warnings[0],
            "OFL_VM_LOW_WATER_MARK='0' is not valid: need an integer from 1 to 65535; using 50 "
            "instead");
}

TEST(SettingsTest, ANameNotInTheTableOrReadAsAnotherTypeIsAProgrammingError) {
  Env env;
  EXPECT_THROW(Get("OFL_NO_SUCH_SETTING"), std::logic_error);
  EXPECT_THROW(env.reader().Flag("OFL_NO_SUCH_SETTING"), std::logic_error);
  EXPECT_THROW(env.reader().Int("OFL_VM_SYNC"), std::logic_error);
  EXPECT_THROW(env.reader().Flag("OFL_VM_SPIN_US"), std::logic_error);
  EXPECT_THROW(env.reader().String("OFL_VM_TIMEOUT_SECONDS"), std::logic_error);
  EXPECT_THROW(env.reader().Number("OFL_TRACE"), std::logic_error);
}

TEST(SettingsTest, WithoutAListABadValueIsLoggedOncePerProcess) {
  // A value no other test sets: what Report() has seen before in this process is not repeated.
  const char* name = "OFL_CUDA_HOST_WIDE_INDEX";
  bool first = true, second = true;
  std::string err;
  {
    ::ofl::testing::ScopedEnv env(name, "twice");
    ::testing::internal::CaptureStderr();
    first = Flag(name);
    second = Reader().Flag(name);
    err = ::testing::internal::GetCapturedStderr();
  }
  EXPECT_FALSE(first);
  EXPECT_FALSE(second);
  const std::string message =
      "OFL_CUDA_HOST_WIDE_INDEX='twice' is not valid: need an integer from 0 to 1; using 0 "
      "instead";
  const size_t at = err.find(message);
  ASSERT_NE(at, std::string::npos) << err;
  EXPECT_EQ(err.find(message, at + 1), std::string::npos) << err;
  EXPECT_NE(err.find("[warning]"), std::string::npos) << err;
}

}  // namespace
}  // namespace ofl::settings
