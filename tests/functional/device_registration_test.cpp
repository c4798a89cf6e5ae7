// Registering device backends and kernels: what is refused (a backend replaced after its devices
// were used, a built-in type, a kernel for a type without a backend or for an op that does not
// exist), a kernel replaced after it ran, and the message a backend that counts no devices gets.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "functional_test_util.h"
#include "host_memory_backend.h"

namespace ofl::testing {
namespace {

void NoOpKernel(const KernelContext&) {}

TEST(DeviceRegistrationTest, ABackendCannotBeReplacedOnceItsDevicesWereUsed) {
  register_device_backend("latereg", std::make_shared<HostMemoryBackend>());
  // Replacing it before any use is allowed.
  register_device_backend("latereg", std::make_shared<HostMemoryBackend>());
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}), Device("latereg:0"));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  ExpectThrowWith<InvalidArgument>(
      [] { register_device_backend("latereg", std::make_shared<HostMemoryBackend>()); },
      {"register_device_backend", "'latereg'", "in use already", "before the first use"});
  // The device keeps its backend and keeps working.
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  ExpectRuntimeWorks();
}

TEST(DeviceRegistrationTest, BuiltInDeviceTypesCannotBeReplaced) {
  for (const char* type : {"cpu", "sim", "cuda"}) {
    ExpectThrowWith<InvalidArgument>(
        [type] { register_device_backend(type, std::make_shared<HostMemoryBackend>()); },
        {"register_device_backend", std::string("the ") + type + " backend is built in"});
  }
  // The simulator still has its own backend and kernels.
  const Tensor s = ofl::tensor<float>({1, 2}, Shape({2, 1}), Device("sim:0"));
  EXPECT_EQ(s.repeat({1, 2}).to_vector<float>(), (std::vector<float>{1, 1, 2, 2}));
  ExpectRuntimeWorks();
}

int first_kernel_runs = 0;
int second_kernel_runs = 0;

TEST(DeviceRegistrationTest, ALaterKernelReplacesAnEarlierOneAlsoAfterItRan) {
  register_device_backend("rekernel", std::make_shared<HostMemoryBackend>());
  register_kernel("empty", "rekernel", [](const KernelContext&) { ++first_kernel_runs; });
  Tensor a = ofl::empty(Shape({4}), DType::kFloat32, Device("rekernel:0"));
  ofl::sync();
  EXPECT_EQ(first_kernel_runs, 1);
  register_kernel("empty", "rekernel", [](const KernelContext&) { ++second_kernel_runs; });
  Tensor b = ofl::empty(Shape({4}), DType::kFloat32, Device("rekernel:0"));
  ofl::sync();
  EXPECT_EQ(first_kernel_runs, 1) << "the replaced kernel ran again";
  EXPECT_EQ(second_kernel_runs, 1);
  ExpectRuntimeWorks();
}

TEST(DeviceRegistrationTest, AKernelForADeviceTypeWithoutABackendIsRefusedAndMakesNoType) {
  ExpectThrowWith<InvalidArgument>(
      [] { register_kernel("copy", "typo", &NoOpKernel); },
      {"register_kernel", "'typo'", "has no backend", "register_device_backend first", "cpu, sim"});
  DeviceType t;
  EXPECT_FALSE(find_device_type("typo", &t)) << "a refused kernel must not create a device type";
  ExpectRuntimeWorks();
}

TEST(DeviceRegistrationTest, AKernelForAnOpThatDoesNotExistIsRefused) {
  ExpectThrowWith<InvalidArgument>(
      [] { register_kernel("no_such_op", "cpu", &NoOpKernel); },
      {"register_kernel", "no op named 'no_such_op'", "copy", "empty", "reduce_sum_to", "repeat"});
  ExpectRuntimeWorks();
}

// A backend that reports a negative number of devices.
class NegativeCountBackend final : public HostMemoryBackend {
 public:
  int device_count() override { return -5; }
};

TEST(DeviceRegistrationTest, ABackendCountingNoDevicesSaysSoWithoutAnIndexRange) {
  register_device_backend("negcount", std::make_shared<NegativeCountBackend>());
  register_kernel("empty", "negcount", &NoOpKernel);
  try {
    (void)ofl::empty(Shape({2}), DType::kFloat32, Device("negcount:0"));
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("negcount:0: no such device: device type negcount has no device on this "
                       "machine (its backend's device_count() returned -5)"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("0..-"), std::string::npos) << msg;
  }
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
