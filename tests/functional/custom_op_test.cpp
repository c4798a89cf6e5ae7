// Ops defined outside the library (extension.h: register_op, call_op): the stages of an op call,
// autograd through them, their kernels on a program's own device type, and every error of the API.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/op_schema.h"
#include "tests/functional/functional_test_util.h"
#include "tests/functional/host_memory_backend.h"

namespace ofl::testing {
namespace {

// out = a * x + y for float32 x and y of one shape, inputs of any strides.
void Axpy(const KernelContext& ctx, float a) {
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& y = ctx.inputs[1];
  const TensorArg& out = ctx.outputs[0];
  const int n = out.shape.ndim();
  std::vector<int64_t> idx(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < out.shape.numel(); ++i) {
    int64_t ox = 0, oy = 0, oo = 0;
    for (int d = 0; d < n; ++d) {
      ox += idx[d] * x.stride[d];
      oy += idx[d] * y.stride[d];
      oo += idx[d] * out.stride[d];
    }
    static_cast<float*>(out.data)[oo] =
        a * static_cast<const float*>(x.data)[ox] + static_cast<const float*>(y.data)[oy];
    for (int d = n - 1; d >= 0 && ++idx[d] == out.shape[d]; --d) idx[d] = 0;
  }
}

// "axpy": its attribute alpha (double) is a.
void AxpyKernel(const KernelContext& ctx) {
  Axpy(ctx, static_cast<float>(ctx.attributes.get_double("alpha")));
}

std::vector<TensorMeta> InferAxpy(const std::vector<TensorMeta>& in) {
  if (in[0].shape != in[1].shape || in[0].dtype != DType::kFloat32 ||
      in[1].dtype != DType::kFloat32) {
    throw InvalidArgument("axpy: x and y must be float32 of one shape, got " + in[0].shape.str() +
                          " and " + in[1].shape.str());
  }
  return std::vector<TensorMeta>{in[0]};
}

void RegisterAxpyOnce() {
  static const bool done = [] {
    OpDef def;
    def.name = "axpy";
    def.num_inputs = 2;
    def.attrs = {{"alpha", AttrType::kDouble}};
    def.infer = [](const std::vector<TensorMeta>& in, const Attrs&) { return InferAxpy(in); };
    def.backward = [](const std::vector<Tensor>&, const std::vector<Tensor>&, const Attrs& attrs,
                      const std::vector<Tensor>& g) {
      return std::vector<Tensor>{g[0] * attrs.get_double("alpha"), g[0]};
    };
    register_op(def);
    register_kernel("axpy", "cpu", &AxpyKernel);

    OpDef nograd;
    nograd.name = "axpy_no_grad";
    nograd.num_inputs = 2;
    nograd.attrs = def.attrs;
    nograd.infer = def.infer;
    register_op(nograd);
    register_kernel("axpy_no_grad", "cpu", &AxpyKernel);
    return true;
  }();
  (void)done;
}

Tensor Cpu(const std::vector<float>& v, const Dims& shape) {
  return ofl::tensor<float>(v, Shape(shape), Device("cpu"));
}

TEST(CustomOpTest, RunsOnTheGenericPathWithStridedInputs) {
  RegisterAxpyOnce();
  Tensor x = Cpu({1, 2, 3}, {3}).expand({2, 3});  // stride 0 on dim 0
  Tensor y = Cpu({10, 20, 30, 40, 50, 60}, {3, 2}).permute({1, 0});
  std::vector<Tensor> out = call_op("axpy", {x, y}, {{"alpha", 2.0}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].is_contiguous());
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{12, 34, 56, 22, 44, 66}));
}

TEST(CustomOpTest, AutogradRunsItsBackward) {
  RegisterAxpyOnce();
  Tensor x = Cpu({1, 2}, {2});
  Tensor y = Cpu({3, 4}, {2});
  x.requires_grad_();
  y.requires_grad_();
  Tensor out = call_op("axpy", {x, y}, {{"alpha", 3}})[0];  // an int converts to a double
  EXPECT_EQ(out.grad_fn_name(), "AxpyBackward");
  (out * out).sum().backward();
  // d/dx = 2 * out * 3, d/dy = 2 * out, out = (6, 10).
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{36, 60}));
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{12, 20}));

  Tensor z = call_op("axpy_no_grad", {x, y}, {{"alpha", 1.0}})[0];
  ExpectThrowWith<InvalidArgument>([&] { z.sum().backward(); },
                                   {"backward", "'axpy_no_grad'", "no backward"});
  ExpectRuntimeWorks();
}

TEST(CustomOpTest, RunsWithAutogradOnAProgramsOwnDevice) {
  RegisterAxpyOnce();
  register_device_backend("ownhost", std::make_shared<HostMemoryBackend>());
  // Its memory is host memory: the CPU kernels serve it, as a program's own kernels would.
  for (const char* op : {"copy", "fill", "add", "mul", "reduce_sum_to", "empty"}) {
    register_kernel(op, "ownhost", kernels::FindKernel(op, DeviceType::kCPU));
  }
  register_kernel("axpy", "ownhost", &AxpyKernel);
  const Device dev("ownhost:0");
  Tensor x = ofl::tensor<float>({1, 2}, Shape({2}), dev);
  Tensor y = ofl::tensor<float>({3, 4}, Shape({2}), dev);
  x.requires_grad_();
  Tensor out = call_op("axpy", {x, y}, {{"alpha", 2.0}})[0];
  EXPECT_EQ(out.device(), dev);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{5, 8}));
  out.sum().backward();
  EXPECT_EQ(x.grad().device(), dev);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(CustomOpTest, RegistrationErrors) {
  RegisterAxpyOnce();
  auto infer = [](const std::vector<TensorMeta>& in, const Attrs&) { return in; };
  auto def = [&](const std::string& name, int in, int out, bool with_infer) {
    OpDef d;
    d.name = name;
    d.num_inputs = in;
    d.num_outputs = out;
    if (with_infer) d.infer = infer;
    return d;
  };
  ExpectThrowWith<InvalidArgument>([&] { register_op(def("Bad-Name", 1, 1, true)); },
                                   {"register_op", "'Bad-Name'", "lower-case identifier"});
  ExpectThrowWith<InvalidArgument>([&] { register_op(def("", 1, 1, true)); },
                                   {"register_op", "lower-case identifier"});
  ExpectThrowWith<InvalidArgument>([&] { register_op(def("add", 2, 1, true)); },
                                   {"register_op", "'add'", "built-in"});
  ExpectThrowWith<InvalidArgument>([&] { register_op(def("axpy", 2, 1, true)); },
                                   {"register_op", "'axpy'", "exists already"});
  ExpectThrowWith<InvalidArgument>([&] { register_op(def("negative_in", -1, 1, true)); },
                                   {"register_op", "'negative_in'", "num_inputs -1", "below 0"});
  ExpectThrowWith<InvalidArgument>([&] { register_op(def("negative_out", 1, -2, true)); },
                                   {"register_op", "num_outputs -2"});
  ExpectThrowWith<InvalidArgument>([&] { register_op(def("no_infer", 1, 1, false)); },
                                   {"register_op", "'no_infer'", "no infer"});
  OpDef bad_attr = def("bad_attr", 1, 1, true);
  bad_attr.attrs = {{"Alpha", AttrType::kDouble}};
  ExpectThrowWith<InvalidArgument>(
      [&] { register_op(bad_attr); },
      {"register_op", "'bad_attr'", "'Alpha'", "lower-case identifier"});
  OpDef twice = def("attr_twice", 1, 1, true);
  twice.attrs = {{"alpha", AttrType::kDouble}, {"alpha", AttrType::kInt}};
  ExpectThrowWith<InvalidArgument>([&] { register_op(twice); },
                                   {"register_op", "'attr_twice'", "'alpha'", "declared twice"});
  EXPECT_EQ(ops::FindOp("bad_attr"), nullptr);
  EXPECT_EQ(ops::FindOp("attr_twice"), nullptr);
}

TEST(CustomOpTest, CallErrors) {
  RegisterAxpyOnce();
  Tensor x = Cpu({1, 2}, {2});
  ExpectThrowWith<InvalidArgument>([&] { call_op("nope", {x}); }, {"call_op", "'nope'"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {x}, {{"alpha", 1.0}});
      },
      {"axpy", "expects 2 inputs", "got 1"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {x, Cpu({1, 2, 3}, {3})}, {{"alpha", 1.0}});
      },
      {"axpy", "(2)", "(3)"});
  Tensor s = ofl::tensor<float>({1, 2}, Shape({2}), Device("sim:0"));
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {x, s}, {{"alpha", 1.0}});
      },
      {"axpy", "different devices", "cpu:0", "sim:0"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {s, s}, {{"alpha", 1.0}});
      },
      {"axpy", "no kernel", "sim"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {x, Tensor()}, {{"alpha", 1.0}});
      },
      {"axpy", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { call_op("to", {x}); },
                                   {"to", "'device' (string) is missing"});
  // The other built-in ops go through call_op too, views included.
  EXPECT_EQ(call_op("mul", {x, x})[0].to_vector<float>(), (std::vector<float>{1, 4}));
  const Tensor e = call_op("expand", {x}, {{"sizes", {3, 2}}})[0];
  EXPECT_EQ(e.shape(), Shape({3, 2}));
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{1, 2, 1, 2, 1, 2}));
  // So do the in-place ops (returning the tensor they wrote) and to (the device by name).
  Tensor y = x.clone();
  const Tensor w = call_op("add_", {y, x})[0];
  EXPECT_TRUE(w.is_set_to(y));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(y.version(), 1);
  const Device sim("sim:0");
  const Tensor moved = call_op("to", {x}, {{"device", "sim:0"}})[0];
  EXPECT_EQ(moved.device(), sim);
  EXPECT_EQ(moved.to_vector<float>(), (std::vector<float>{1, 2}));
  ExpectRuntimeWorks();
}

TEST(CustomOpTest, AttributeErrorsNameTheOpTheAttributeAndTheValue) {
  RegisterAxpyOnce();
  Tensor x = Cpu({1, 2}, {2});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {x, x});
      },
      {"axpy", "'alpha' (double) is missing"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {x, x}, {{"alpha", 1.0}, {"beta", 2.0}});
      },
      {"axpy", "no attribute 'beta'", "alpha (double)"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {x, x}, {{"alpha", 1.0}, {"alpha", 2.0}});
      },
      {"axpy", "'alpha' is given twice"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {x, x}, {{"alpha", "two"}});
      },
      {"axpy", "'alpha' is a double", "the string 'two'"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy", {x, x}, {{"alpha", true}});
      },
      {"axpy", "'alpha' is a double", "the bool true"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("expand", {x}, {{"sizes", 2.5}});
      },
      {"expand", "'sizes' is an int list", "the double 2.5"});
  // The entry refuses attributes made for another op's declarations.
  const ops::OpSchema& narrow = *ops::FindOp("narrow");
  const ops::OpSchema& permute = *ops::FindOp("permute");
  ExpectThrowWith<InvalidArgument>(
      [&] { functional::Call(narrow, x, Attrs(permute.attrs, std::vector<int64_t>{0})); },
      {"narrow", "takes the attributes dim (int), start (int), length (int)",
       "those of op 'permute' (dims=[0])"});
  ExpectThrowWith<InvalidArgument>([&] { functional::Call(narrow, x, Attrs()); },
                                   {"narrow", "got none"});
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  // An op with typed attributes refuses the deprecated integers, naming what it takes.
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("narrow", {x}, std::vector<int64_t>{0, 0, 1});
      },
      {"call_op", "'narrow'", "dim (int), start (int), length (int)", "[0, 0, 1]"});
#pragma GCC diagnostic pop
  ExpectRuntimeWorks();
}

// An op written before typed attributes (no declarations; infer, backward and kernel take the
// integers) still compiles and runs, through the deprecated accessors.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void LegacyAxpyKernel(const KernelContext& ctx) { Axpy(ctx, static_cast<float>(ctx.attrs[0])); }

TEST(CustomOpTest, AnOpWithoutAttributeDeclarationsTakesIntegers) {
  static const bool registered = [] {
    OpDef def;
    def.name = "axpy_legacy";
    def.num_inputs = 2;
    def.infer = [](const std::vector<TensorMeta>& in, const std::vector<int64_t>& attrs) {
      if (attrs.size() != 1) {
        throw InvalidArgument("axpy_legacy: attrs must hold a, got " +
                              std::to_string(attrs.size()));
      }
      return InferAxpy(in);
    };
    def.backward = [](const std::vector<Tensor>&, const std::vector<Tensor>&,
                      const std::vector<int64_t>& attrs, const std::vector<Tensor>& g) {
      return std::vector<Tensor>{g[0] * static_cast<double>(attrs[0]), g[0]};
    };
    register_op(def);
    register_kernel("axpy_legacy", "cpu", &LegacyAxpyKernel);
    return true;
  }();
  (void)registered;
  Tensor x = Cpu({1, 2}, {2});
  Tensor y = Cpu({3, 4}, {2});
  x.requires_grad_();
  Tensor out = call_op("axpy_legacy", {x, y}, std::vector<int64_t>{3})[0];
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{6, 10}));
  out.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{3, 3}));
  // By name, the integers are its one int list "attrs".
  EXPECT_EQ(call_op("axpy_legacy", {x, y}, {{"attrs", {2}}})[0].to_vector<float>(),
            (std::vector<float>{5, 8}));
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("axpy_legacy", {x, y});
      },
      {"axpy_legacy", "attrs must hold a, got 0"});
}
#pragma GCC diagnostic pop

}  // namespace
}  // namespace ofl::testing
