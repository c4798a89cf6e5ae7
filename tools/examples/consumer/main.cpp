// An example program built against an installed oneflow_lite (see the CMakeLists.txt next to it
// and docs/cmake.md, "Using it from your CMake project"): expands and repeats a tensor, sums the
// expanded one back, and prints the results with the library's version. Then it plugs in a device
// of its own ("mydev", "Your own device" in docs/devices.md), with no change to the library.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <vector>

#include "oneflow_lite/extension.h"
#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/version.h"

namespace {

// --- docs/devices.md "Your own device": begin ---
// A device whose memory is ordinary host memory and whose work is done when a call returns.
struct MyDevice : ofl::DeviceBackend {
  int device_count() override { return 2; }
  void* allocate(int, size_t n) override { return std::aligned_alloc(256, (n + 255) / 256 * 256); }
  void deallocate(int, void* p, size_t) override { std::free(p); }
  ofl::NativeStream create_stream(int) override { return this; }
  void destroy_stream(int, ofl::NativeStream) override {}
  ofl::NativeEvent create_event(int) override { return this; }
  void destroy_event(int, ofl::NativeEvent) override {}
  void record_event(ofl::NativeEvent, ofl::NativeStream) override {}
  bool query_event(ofl::NativeEvent) override { return true; }
  void synchronize_event(ofl::NativeEvent) override {}
  void stream_wait_event(ofl::NativeStream, ofl::NativeEvent) override {}
  void copy_async(void* dst, const void* src, size_t n, ofl::CopyKind, ofl::NativeStream) override {
    std::memcpy(dst, src, n);
  }
};

// "copy" over any strides: walk the output's indices like an odometer.
void MyCopy(const ofl::KernelContext& ctx) {
  const ofl::TensorArg& in = ctx.inputs[0];
  const ofl::TensorArg& out = ctx.outputs[0];
  const size_t es = ofl::element_size(in.dtype);
  std::vector<int64_t> idx(in.shape.size(), 0);
  for (int64_t n = 0; n < in.shape.numel(); ++n) {
    int64_t src = 0, dst = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += idx[d] * in.stride[d], dst += idx[d] * out.stride[d];
    std::memcpy(static_cast<char*>(out.data) + dst * es, static_cast<char*>(in.data) + src * es,
                es);
    for (size_t d = idx.size(); d-- > 0 && ++idx[d] == in.shape[d];) idx[d] = 0;
  }
}
// --- docs/devices.md "Your own device": end ---

void Print(const char* name, const ofl::Tensor& t) {
  std::cout << name << " " << t.shape() << ":";
  for (float v : t.to_vector<float>()) std::cout << " " << v;  // waits for the values
  std::cout << "\n";
}

}  // namespace

int main() {
  // The library this program runs with must be the one its headers came from.
  std::cout << "oneflow_lite " << ofl::version() << " (headers " << OFL_VERSION_STRING << ")\n";
  if (std::strcmp(ofl::version(), OFL_VERSION_STRING) != 0) {
    std::cerr << "version mismatch between headers and library\n";
    return 1;
  }
  try {
    ofl::Tensor x = ofl::tensor<float>({1, 2, 3}, {3, 1});
    ofl::Tensor e = x.expand({2, 3, 2});  // a view: no copy
    ofl::Tensor r = x.repeat({2, 2});     // queued; returns at once
    ofl::Tensor g = ofl::expand_backward(e.contiguous(), x.shape());
    Print("x", x);
    Print("expand", e);
    Print("repeat", r);
    Print("expand_backward", g);
    ofl::sync();

    ofl::register_device_backend("mydev", std::make_shared<MyDevice>());
    ofl::register_kernel("copy", "mydev", &MyCopy);
    ofl::register_kernel("empty", "mydev", [](const ofl::KernelContext&) {});
    ofl::Tensor m = x.to(ofl::Device("mydev:1"));
    Print("mydev:1 expand", m.expand({2, 3, 2}).contiguous());
    Print("mydev:1 back on cpu", m.permute({1, 0}).to(ofl::Device("cpu")));
    try {
      m.repeat({2, 2});  // no "repeat" kernel was registered for mydev
    } catch (const ofl::InvalidArgument& e) {
      std::cout << "mydev:1 repeat: " << e.what() << "\n";
    }
  } catch (const ofl::Error& err) {
    std::cerr << "oneflow_lite error: " << err.what() << "\n";
    return 1;
  }
  return 0;
}
