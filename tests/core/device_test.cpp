// Device: parsing "cpu" / "cpu:N" / "cuda" / "cuda:N", printing, equality, and the InvalidArgument
// (naming the rejected string) for everything else.
#include <gtest/gtest.h>

#include <string>

#include "oneflow_lite/device.h"
#include "oneflow_lite/error.h"

namespace ofl {
namespace {

TEST(DeviceTest, ParsesCpu) {
  const Device d("cpu");
  EXPECT_EQ(d.type(), DeviceType::kCPU);
  EXPECT_EQ(d.index(), 0);
  EXPECT_TRUE(d.is_cpu());
  EXPECT_FALSE(d.is_cuda());
  EXPECT_EQ(d.str(), "cpu:0");
}

TEST(DeviceTest, ParsesCpuZero) {
  const Device d("cpu:0");
  EXPECT_EQ(d.type(), DeviceType::kCPU);
  EXPECT_EQ(d.index(), 0);
  EXPECT_EQ(d, Device("cpu"));
}

TEST(DeviceTest, ParsesCudaWithoutIndexAsZero) {
  const Device d("cuda");
  EXPECT_EQ(d.type(), DeviceType::kCUDA);
  EXPECT_EQ(d.index(), 0);
  EXPECT_TRUE(d.is_cuda());
  EXPECT_FALSE(d.is_cpu());
  EXPECT_EQ(d.str(), "cuda:0");
  EXPECT_EQ(d, Device("cuda:0"));
}

TEST(DeviceTest, ParsesCudaIndex) {
  const Device d("cuda:1");
  EXPECT_EQ(d.type(), DeviceType::kCUDA);
  EXPECT_EQ(d.index(), 1);
  EXPECT_EQ(d.str(), "cuda:1");
  EXPECT_EQ(Device("cuda:12").index(), 12);
}

TEST(DeviceTest, FromStringViewAndStdString) {
  const std::string spec = "cuda:3";
  EXPECT_EQ(Device(std::string_view(spec)), Device(DeviceType::kCUDA, 3));
  EXPECT_EQ(Device(spec.c_str()).index(), 3);
}

TEST(DeviceTest, Equality) {
  EXPECT_EQ(Device(DeviceType::kCPU, 0), Device("cpu"));
  EXPECT_NE(Device("cpu"), Device("cuda"));
  EXPECT_NE(Device("cuda:0"), Device("cuda:1"));
  EXPECT_EQ(to_string(DeviceType::kCPU), "cpu");
  EXPECT_EQ(to_string(DeviceType::kCUDA), "cuda");
}

// The message must quote the whole string the caller passed, so the bad spec can be found.
void ExpectRejected(const std::string& spec) {
  SCOPED_TRACE("spec '" + spec + "'");
  try {
    Device d(spec);
    ADD_FAILURE() << "accepted as " << d.str();
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Device"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + spec + "'"), std::string::npos) << msg;
  }
}

TEST(DeviceTest, RejectsUnknownType) {
  ExpectRejected("gpu");
  ExpectRejected("CPU");
  ExpectRejected("cud");
  ExpectRejected("cpux");
  ExpectRejected(" cpu");
}

TEST(DeviceTest, RejectsEmptyString) { ExpectRejected(""); }

TEST(DeviceTest, RejectsBadIndex) {
  ExpectRejected("cuda:-1");
  ExpectRejected("cuda:x");
  ExpectRejected("cuda:");
  ExpectRejected("cuda:1x");
  ExpectRejected("cuda:+1");
  ExpectRejected("cuda: 1");
  ExpectRejected("cuda:1:2");
  ExpectRejected("cuda:99999999999999999999");  // does not fit an int
  ExpectRejected(":0");
}

TEST(DeviceTest, RejectsCpuIndexOtherThanZero) {
  ExpectRejected("cpu:1");
  ExpectRejected("cpu:-1");
}

}  // namespace
}  // namespace ofl
