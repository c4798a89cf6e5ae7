// Argument errors of the public API, end to end: each throws the right exception type at the call,
// with a message naming the op and the offending values, and leaves the runtime working.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/functional/functional_test_util.h"
#include "vm/virtual_machine.h"

namespace ofl::testing {
namespace {

TEST(ApiErrorsTest, ToVectorWithTheWrongType) {
  const Tensor f = ofl::tensor<float>({1, 2, 3}, Shape({3}), TestDevice());
  ExpectThrowWith<InvalidArgument>([&] { f.to_vector<int32_t>(); },
                                   {"to_vector", "int32", "float32"});
  ExpectThrowWith<InvalidArgument>([&] { f.to_vector<double>(); },
                                   {"to_vector", "float64", "float32"});
  ExpectThrowWith<InvalidArgument>([&] { f.to_vector<bool>(); }, {"to_vector", "bool", "float32"});
  ExpectThrowWith<InvalidArgument>([&] { f.to_vector<float16>(); },
                                   {"to_vector", "float16", "float32"});
  const Tensor b = ofl::tensor<bool>({true, false}, Shape({2}), TestDevice());
  ExpectThrowWith<InvalidArgument>([&] { b.to_vector<uint8_t>(); }, {"to_vector", "uint8", "bool"});
  const Tensor h = ofl::tensor<bfloat16>({bfloat16(1.0f)}, Shape({1}), TestDevice());
  ExpectThrowWith<InvalidArgument>([&] { h.to_vector<float16>(); },
                                   {"to_vector", "float16", "bfloat16"});
  // The tensors are intact.
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false}));
  ExpectRuntimeWorks();
}

TEST(ApiErrorsTest, CopyToHostWithTheWrongByteCount) {
  const Tensor t = ofl::tensor<float>({1, 2, 3, 4, 5, 6}, Shape({2, 3}), TestDevice());
  std::vector<char> buf(100);
  ExpectThrowWith<InvalidArgument>([&] { t.copy_to_host(buf.data(), 7); },
                                   {"copy_to_host", "7", "24", "(2,3)", "float32"});
  ExpectThrowWith<InvalidArgument>([&] { t.copy_to_host(buf.data(), 48); },
                                   {"copy_to_host", "48", "24"});
  ExpectThrowWith<InvalidArgument>([&] { t.copy_to_host(buf.data(), 0); },
                                   {"copy_to_host", "0", "24"});
  float out[6] = {};
  t.copy_to_host(out, sizeof(out));
  EXPECT_EQ(out[5], 6.0f);
  ExpectRuntimeWorks();
}

TEST(ApiErrorsTest, TensorWithTheWrongElementCount) {
  ExpectThrowWith<InvalidArgument>(
      [] {
        ofl::tensor<float>({1, 2, 3, 4, 5}, Shape({2, 3}), TestDevice());
      },
      {"tensor", "5", "(2,3)", "6"});
  ExpectThrowWith<InvalidArgument>([] { ofl::tensor<int64_t>({}, Shape(), TestDevice()); },
                                   {"tensor", "0", "()", "1"});
  ExpectThrowWith<InvalidArgument>([] { ofl::tensor<bool>({true}, Shape({2}), TestDevice()); },
                                   {"tensor", "1", "(2)", "2"});
  ExpectRuntimeWorks();
}

TEST(ApiErrorsTest, FromHostWithNullData) {
  ExpectThrowWith<InvalidArgument>(
      [] {
        ofl::from_host(nullptr, Shape({2, 3}), DType::kFloat32, TestDevice());
      },
      {"from_host", "null", "(2,3)", "float32", "24"});
  // Nothing to read: null is fine.
  const Tensor e = ofl::from_host(nullptr, Shape({0, 3}), DType::kInt16, TestDevice());
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector<int16_t>().empty());
  ExpectRuntimeWorks();
}

TEST(ApiErrorsTest, EmptyWithBadShapes) {
  ExpectThrowWith<InvalidArgument>(
      [] {
        ofl::empty(Shape({2, -3}), DType::kFloat32, TestDevice());
      },
      {"empty", "shape", "(2,-3)", "-3"});
  const int64_t big = int64_t{1} << 40;
  ExpectThrowWith<InvalidArgument>(
      [&] {
        ofl::empty(Shape({big, big}), DType::kFloat32, TestDevice());
      },
      {"empty", "shape", Str({big, big})});
  // Fits in elements, not in bytes.
  const int64_t n = int64_t{1} << 61;
  ExpectThrowWith<InvalidArgument>([&] { ofl::empty(Shape({n}), DType::kFloat64, TestDevice()); },
                                   {"empty", Str({n}), "8 bytes"});
  ExpectRuntimeWorks();
}

TEST(ApiErrorsTest, UndefinedTensor) {
  const Tensor u;
  EXPECT_FALSE(u.defined());
  ExpectThrowWith<InvalidArgument>([&] { u.shape(); }, {"undefined"});
  ExpectThrowWith<InvalidArgument>([&] { u.dtype(); }, {"undefined"});
  ExpectThrowWith<InvalidArgument>([&] { u.numel(); }, {"undefined"});
  ExpectThrowWith<InvalidArgument>([&] { u.to_vector<float>(); }, {"undefined"});
  float f;
  ExpectThrowWith<InvalidArgument>([&] { u.copy_to_host(&f, 4); }, {"copy_to_host", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::expand(u, {2}); }, {"expand", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::repeat(u, {2}); }, {"repeat", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::reshape(u, {1}); }, {"reshape", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::permute(u, {}); }, {"permute", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::narrow(u, 0, 0, 0); }, {"narrow", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::contiguous(u); }, {"contiguous", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { u.contiguous(); }, {"contiguous", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::expand_backward(u, Shape({1})); },
                                   {"expand_backward", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::repeat_backward(u, Shape({1}), {1}); },
                                   {"repeat_backward", "undefined"});
  ExpectRuntimeWorks();
}

TEST(ApiErrorsTest, NegativeMemoryLimit) {
  ExpectThrowWith<InvalidArgument>([] { ofl::set_memory_limit(Device("cpu"), -1); },
                                   {"set_memory_limit", "-1", "cpu:0"});
  ExpectRuntimeWorks();
}

TEST(ApiErrorsTest, ViewOpArgumentsAreCheckedAtTheCall) {
  const Tensor x = ofl::tensor<float>({1, 2, 3, 4, 5, 6}, Shape({2, 3}), TestDevice());
  ExpectThrowWith<InvalidArgument>([&] { x.expand({4, 3}); }, {"expand", "(4)", "(2)"});
  ExpectThrowWith<InvalidArgument>([&] { x.expand({3}); }, {"expand", "(1)", "(2)"});
  ExpectThrowWith<InvalidArgument>([&] { x.repeat({2, -1}); }, {"repeat", "-1"});
  ExpectThrowWith<InvalidArgument>([&] { x.repeat({2}); }, {"repeat", "(1)", "(2)"});
  ExpectThrowWith<InvalidArgument>([&] { x.reshape({4, -1}); }, {"reshape", "(4,-1)", "(2,3)"});
  ExpectThrowWith<InvalidArgument>([&] { x.reshape({-1, -1}); }, {"reshape", "(-1,-1)"});
  ExpectThrowWith<InvalidArgument>([&] { x.permute({0, 0}); }, {"permute", "(0,0)"});
  ExpectThrowWith<InvalidArgument>([&] { x.permute({0, 2}); }, {"permute", "dim 2"});
  ExpectThrowWith<InvalidArgument>([&] { x.narrow(1, 2, 2); }, {"narrow", "(2)", "(3)"});
  ExpectThrowWith<InvalidArgument>([&] { x.narrow(2, 0, 1); }, {"narrow", "dim 2"});
  const int64_t big = int64_t{1} << 40;
  ExpectThrowWith<InvalidArgument>(
      [&] {
        x.reshape({2, 3, 1}).expand({big, big, 2, 3, 1});
      },
      {"expand", Str({big, big, 2, 3, 1})});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        x.repeat({big, big});
      },
      {"repeat", Str({2 * big, 3 * big})});
  // Nothing was queued by the failed calls, and x is unchanged.
  EXPECT_NO_THROW(ofl::sync());
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  ExpectRuntimeWorks();
}

TEST(ApiErrorsTest, CudaDeviceIsADeviceErrorInThisBuild) {
  // No GPU here (or no CUDA in this build): every use of a CUDA device fails at the call with
  // DeviceError naming the device and the reason.
  if (ofl::device_count(DeviceType::kCUDA) > 0) GTEST_SKIP() << "a GPU is present";
  const std::string reason = ofl::device_unavailable_reason(DeviceType::kCUDA);
  ASSERT_FALSE(reason.empty());
  std::vector<float> data = {1, 2};
  ExpectThrowWith<DeviceError>([] { ofl::empty(Shape({2}), DType::kFloat32, Device("cuda")); },
                               {"cuda:0", reason.substr(0, 30).c_str()});
  ExpectThrowWith<DeviceError>(
      [&] { ofl::from_host(data.data(), Shape({2}), DType::kFloat32, Device("cuda:1")); },
      {"cuda:1"});
  ExpectThrowWith<DeviceError>([&] { ofl::tensor<float>(data, Shape({2}), Device("cuda")); },
                               {"cuda:0"});
  ExpectThrowWith<DeviceError>([] { ofl::memory_stats(Device("cuda")); }, {"cuda:0"});
  ExpectThrowWith<DeviceError>([] { ofl::empty_cache(Device("cuda")); }, {"cuda:0"});
  ExpectThrowWith<DeviceError>([] { ofl::set_memory_limit(Device("cuda"), 1 << 20); }, {"cuda:0"});
  // The same again: a failed lookup must not leave a half-made CUDA pool behind.
  ExpectThrowWith<DeviceError>([] { ofl::empty(Shape({2}), DType::kFloat32, Device("cuda")); },
                               {"cuda:0"});
  ExpectRuntimeWorks();
}

TEST(ApiErrorsTest, BadDeviceStringAtTheCall) {
  ExpectThrowWith<InvalidArgument>([] { ofl::empty(Shape({2}), DType::kFloat32, "gpu"); },
                                   {"Device", "'gpu'"});
  ExpectRuntimeWorks();
}

// Device(DeviceType, int) is checked like the string form: a bad value never reaches the VM, so it
// cannot index past the stream table or start a pool and a worker thread for a device that does
// not exist.
TEST(ApiErrorsTest, BadDeviceValuesAtTheCallCreateNoStream) {
  ExpectRuntimeWorks();  // cpu:0's streams exist before counting
  const size_t streams_before = ofl::vm::VirtualMachine::Get().devices().streams().size();
  std::vector<float> data = {1, 2};
  ExpectThrowWith<InvalidArgument>(
      [] { ofl::empty(Shape({2}), DType::kFloat32, Device(DeviceType::kCPU, -100000)); },
      {"Device", "cpu:-100000"});
  ExpectThrowWith<InvalidArgument>(
      [] { ofl::empty(Shape({2}), DType::kFloat32, Device(DeviceType::kCPU, -1)); },
      {"Device", "cpu:-1"});
  ExpectThrowWith<InvalidArgument>(
      [] { ofl::empty(Shape({2}), DType::kFloat32, Device(static_cast<DeviceType>(7), 0)); },
      {"Device", "7", "DeviceType"});
  ExpectThrowWith<InvalidArgument>(
      [] { ofl::empty(Shape({2}), DType::kFloat32, Device(DeviceType::kCPU, 3)); },
      {"Device", "cpu:3", "only cpu:0 exists"});
  ExpectThrowWith<InvalidArgument>(
      [&] { ofl::tensor<float>(data, Shape({2}), Device(DeviceType::kCPU, 1)); },
      {"Device", "cpu:1"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        ofl::from_host(data.data(), Shape({2}), DType::kFloat32, Device(DeviceType::kCPU, 2));
      },
      {"Device", "cpu:2"});
  ExpectThrowWith<InvalidArgument>([] { ofl::memory_stats(Device(DeviceType::kCPU, 5)); },
                                   {"Device", "cpu:5"});
  ExpectThrowWith<InvalidArgument>([] { ofl::empty_cache(Device(DeviceType::kCUDA, -2)); },
                                   {"Device", "cuda:-2"});
  EXPECT_EQ(ofl::vm::VirtualMachine::Get().devices().streams().size(), streams_before);
  // An op on cpu:0 still runs and reads back.
  const Tensor x = ofl::tensor<float>(data, Shape({2}), Device(DeviceType::kCPU, 0));
  EXPECT_EQ(ofl::repeat(x, {3}).to_vector<float>(), (std::vector<float>{1, 2, 1, 2, 1, 2}));
  ExpectRuntimeWorks();
  EXPECT_EQ(ofl::vm::VirtualMachine::Get().devices().streams().size(), streams_before);
}

}  // namespace
}  // namespace ofl::testing
