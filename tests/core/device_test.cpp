// Device: parsing "cpu" / "cpu:N" / "cuda" / "cuda:N", printing, equality, and the InvalidArgument
// (naming the rejected string) for everything else; Device(DeviceType, int) checks the same.
#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <string>
#include <vector>

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

// Fails unless make() throws InvalidArgument with every piece in its message.
void ExpectConstructorRejects(const std::function<Device()>& make,
                              const std::vector<std::string>& pieces) {
  SCOPED_TRACE(::testing::PrintToString(pieces));
  try {
    const Device d = make();
    ADD_FAILURE() << "accepted as type " << static_cast<int>(d.type()) << ", index " << d.index();
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Device"), std::string::npos) << msg;
    for (const std::string& p : pieces) {
      EXPECT_NE(msg.find(p), std::string::npos) << "message lacks \"" << p << "\": " << msg;
    }
  }
}

TEST(DeviceTest, ConstructorRejectsADeviceTypeThatIsNotRegistered) {
  ExpectConstructorRejects([] { return Device(static_cast<DeviceType>(9), 0); },
                           {"device type value 9 ", "registered DeviceType", "\"cpu[:N]\""});
  ExpectConstructorRejects([] { return Device(static_cast<DeviceType>(kMaxDeviceTypes), 0); },
                           {"device type value 16 "});
  ExpectConstructorRejects([] { return Device(static_cast<DeviceType>(-1), 0); },
                           {"device type value -1 "});
  // The message must not call it cuda (it used to print "cuda:0").
  try {
    Device(static_cast<DeviceType>(9), 0);
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
}

TEST(DeviceTest, SimIsABuiltInDeviceType) {
  const Device d("sim:1");
  EXPECT_EQ(d.type(), DeviceType::kSim);
  EXPECT_EQ(d.index(), 1);
  EXPECT_EQ(d.str(), "sim:1");
  EXPECT_EQ(Device(DeviceType::kSim, 0), Device("sim"));
}

TEST(DeviceTest, UnknownTypeNamesTheKnownOnes) {
  ExpectRejected("mydev_not_registered:0");
  try {
    Device d("nosuchdev:1");
    ADD_FAILURE() << d.str();
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown device type 'nosuchdev'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("\"sim[:N]\""), std::string::npos) << msg;
  }
}

TEST(DeviceTest, ConstructorRejectsANegativeIndex) {
  ExpectConstructorRejects([] { return Device(DeviceType::kCPU, -1); }, {"cpu:-1", "negative"});
  ExpectConstructorRejects([] { return Device(DeviceType::kCPU, -100000); },
                           {"cpu:-100000", "negative"});
  ExpectConstructorRejects([] { return Device(DeviceType::kCUDA, -1); }, {"cuda:-1", "negative"});
  ExpectConstructorRejects([] { return Device(DeviceType::kCUDA, INT_MIN); },
                           {"cuda:" + std::to_string(INT_MIN), "negative"});
}

TEST(DeviceTest, ConstructorRejectsCpuIndexOtherThanZero) {
  ExpectConstructorRejects([] { return Device(DeviceType::kCPU, 3); },
                           {"cpu:3 does not exist", "only cpu:0 exists"});
  ExpectConstructorRejects([] { return Device(DeviceType::kCPU, 1); }, {"cpu:1", "only cpu:0"});
  ExpectConstructorRejects([] { return Device(DeviceType::kCPU, INT_MAX); },
                           {"cpu:" + std::to_string(INT_MAX), "only cpu:0"});
}

TEST(DeviceTest, ConstructorAcceptsCpuZeroAndAnyCudaIndex) {
  EXPECT_EQ(Device(DeviceType::kCPU, 0).str(), "cpu:0");
  EXPECT_EQ(Device(DeviceType::kCUDA, 0).str(), "cuda:0");
  EXPECT_EQ(Device(DeviceType::kCUDA, 7).index(), 7);
  EXPECT_EQ(Device(DeviceType::kCUDA, INT_MAX).index(), INT_MAX);
}

TEST(DeviceTest, ToStringOfAValueOutsideTheEnumIsNotCuda) {
  const std::string s = to_string(static_cast<DeviceType>(7));
  EXPECT_NE(s, "cuda");
  EXPECT_NE(s, "cpu");
  EXPECT_NE(s.find('7'), std::string::npos) << s;
}

}  // namespace
}  // namespace ofl
