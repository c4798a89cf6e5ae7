// An op definition is exactly one form (ops/op_schema.h): every built-in op has the form and the
// kernel its file gives it, and RegisterOp fills a form's defaults and refuses a definition its
// form cannot run, naming the op and what is missing, before anything is registered.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {

const char* FormName(const OpSchema& op) {
  if (op.as<KernelForm>()) return "kernel";
  if (op.as<ViewForm>()) return "view";
  if (op.as<ComposeForm>()) return "compose";
  if (op.as<InPlaceForm>()) return "inplace";
  if (op.as<DeviceCopyForm>()) return "device_copy";
  return "none";
}

TEST(OpFormTest, EveryBuiltinOpHasItsFormAndKernel) {
  struct Row {
    const char* op;
    const char* form;
    const char* kernel;
  };
  const std::vector<Row> rows = {
      {"add", "kernel", "add"},
      {"sub", "kernel", "sub"},
      {"mul", "kernel", "mul"},
      {"div", "kernel", "div"},
      {"sum", "kernel", "reduce_sum_to"},
      {"reduce_sum_to", "kernel", "reduce_sum_to"},
      {"expand_backward", "kernel", "reduce_sum_to"},
      {"repeat", "kernel", "repeat"},
      {"clone", "kernel", "copy"},
      {"expand", "view", "copy"},
      {"reshape", "view", "copy"},
      {"permute", "view", "copy"},
      {"narrow", "view", "copy"},
      {"contiguous", "view", "copy"},
      {"repeat_backward", "compose", "repeat_backward"},
      {"add_", "inplace", "add"},
      {"sub_", "inplace", "sub"},
      {"mul_", "inplace", "mul"},
      {"div_", "inplace", "div"},
      {"copy_", "inplace", "copy"},
      {"fill_", "inplace", "fill"},
      {"zero_", "inplace", "fill"},
      {"to", "device_copy", "to"},
  };
  for (const Row& r : rows) {
    const OpSchema* op = FindOp(r.op);
    ASSERT_NE(op, nullptr) << r.op;
    EXPECT_STREQ(FormName(*op), r.form) << r.op;
    EXPECT_EQ(op->kernel_name(), r.kernel) << r.op;
    EXPECT_EQ(op->is_view(), std::string(r.form) == "view") << r.op;
    EXPECT_EQ(op->is_inplace(), std::string(r.form) == "inplace") << r.op;
  }
  // The quirks are data of their forms.
  EXPECT_TRUE(FindOp("add")->as<KernelForm>()->broadcast_inputs);
  EXPECT_FALSE(FindOp("repeat")->as<KernelForm>()->broadcast_inputs);
  EXPECT_TRUE(static_cast<bool>(FindOp("sum")->as<KernelForm>()->output_shape));
  EXPECT_TRUE(FindOp("expand")->as<ViewForm>()->copy_when_views_disabled);
  EXPECT_FALSE(FindOp("expand")->as<ViewForm>()->unchanged_returns_input);
  EXPECT_TRUE(FindOp("contiguous")->as<ViewForm>()->unchanged_returns_input);
  EXPECT_TRUE(FindOp("add_")->as<InPlaceForm>()->reads_target);
  EXPECT_EQ(FindOp("add_")->as<InPlaceForm>()->node_op, "add");
  EXPECT_FALSE(FindOp("copy_")->as<InPlaceForm>()->reads_target);
  EXPECT_EQ(FindOp("copy_")->as<InPlaceForm>()->node_op, "");
}

OpSchema Named(const char* name) {
  OpSchema op;
  op.name = name;
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) { return in; };
  return op;
}

void ExpectRefused(OpSchema op, const std::vector<std::string>& parts) {
  const std::string name = op.name;
  try {
    RegisterOp(std::move(op));
    ADD_FAILURE() << name << " was registered";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("register_op: op '" + name + "'"), std::string::npos) << msg;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
  }
  EXPECT_EQ(FindOp(name), nullptr) << name << " is registered after all";
}

TEST(OpFormTest, RegistrationRefusesAFormThatCannotRunNamingTheOpAndWhatIsMissing) {
  OpSchema no_infer = Named("form_test_no_infer");
  no_infer.infer = nullptr;
  ExpectRefused(no_infer, {"kernel form needs infer"});

  OpSchema view = Named("form_test_view_without_geometry");
  view.form = ViewForm{};
  ExpectRefused(view, {"view form needs its geometry"});

  OpSchema view2 = Named("form_test_view_of_two");
  ViewForm v;
  v.geometry = [](const Shape& s, const Strides& st, DType, const Attrs&) {
    return std::optional<ViewGeometry>(ViewGeometry{s, st, 0});
  };
  view2.form = v;
  view2.num_inputs = 2;
  ExpectRefused(view2, {"view form takes one input and one output"});

  OpSchema compose = Named("form_test_compose_without_fn");
  compose.form = ComposeForm{};
  ExpectRefused(compose, {"compose form needs its compose function"});

  OpSchema inplace = Named("form_test_inplace_without_infer");
  inplace.form = InPlaceForm{};
  inplace.infer = nullptr;
  ExpectRefused(inplace, {"in-place form needs infer"});

  OpSchema inplace2 = Named("form_test_inplace_two_outputs");
  inplace2.form = InPlaceForm{};
  inplace2.num_outputs = 2;
  ExpectRefused(inplace2, {"in-place form writes input 0 and returns it"});

  OpSchema copy = Named("form_test_copy_without_device");
  copy.form = DeviceCopyForm{};
  copy.infer1 = [](const TensorMeta& x, const Attrs&) { return x; };
  ExpectRefused(copy, {"device-copy form needs a string attribute 'device'"});
  OpSchema copy2 = Named("form_test_copy_int_device");
  copy2.form = DeviceCopyForm{};
  copy2.attrs = {{"device", AttrType::kInt}};
  copy2.infer1 = [](const TensorMeta& x, const Attrs&) { return x; };
  ExpectRefused(copy2, {"device-copy form needs a string attribute 'device'"});
  OpSchema copy3 = Named("form_test_copy_without_infer1");
  copy3.form = DeviceCopyForm{};
  copy3.attrs = {{"device", AttrType::kString}};
  ExpectRefused(copy3, {"device-copy form needs infer1"});
}

TEST(OpFormTest, RegistrationFillsTheKernelNameWithTheOpsOwn) {
  const OpSchema* k = RegisterOp(Named("form_test_default_kernel"));
  EXPECT_EQ(k->kernel_name(), "form_test_default_kernel");
  OpSchema named = Named("form_test_named_kernel");
  named.form = KernelForm{"copy"};
  EXPECT_EQ(RegisterOp(std::move(named))->kernel_name(), "copy");
  OpSchema inplace = Named("form_test_inplace_kernel");
  inplace.form = InPlaceForm{};
  EXPECT_EQ(RegisterOp(std::move(inplace))->kernel_name(), "form_test_inplace_kernel");
}

}  // namespace
}  // namespace ofl::ops
