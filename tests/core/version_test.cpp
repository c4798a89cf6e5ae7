// Version: the macros in the generated oneflow_lite/version.h agree with each other, with the CMake
// project's version, and with ofl::version() from the library the test runs with.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "oneflow_lite/version.h"

namespace ofl {
namespace {

TEST(VersionTest, StringIsMajorDotMinorDotPatch) {
  const std::string expected = std::to_string(OFL_VERSION_MAJOR) + "." +
                               std::to_string(OFL_VERSION_MINOR) + "." +
                               std::to_string(OFL_VERSION_PATCH);
  EXPECT_EQ(std::string(OFL_VERSION_STRING), expected);
}

TEST(VersionTest, MacrosMatchTheProjectVersion) {
  EXPECT_EQ(std::string(OFL_VERSION_STRING), std::string(OFL_TEST_PROJECT_VERSION));
}

TEST(VersionTest, LibraryReportsTheHeaderVersion) {
  ASSERT_NE(version(), nullptr);
  EXPECT_STREQ(version(), OFL_VERSION_STRING);
  EXPECT_EQ(version(), version());  // a static string: callers may keep the pointer
}

TEST(VersionTest, NumberOrdersVersions) {
  EXPECT_EQ(OFL_VERSION_NUMBER,
            OFL_VERSION_MAJOR * 10000 + OFL_VERSION_MINOR * 100 + OFL_VERSION_PATCH);
  static_assert(OFL_VERSION_NUMBER >= 100, "0.1.0 was the first release");
}

}  // namespace
}  // namespace ofl
