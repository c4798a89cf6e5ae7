#include "ops/op_schema.h"

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "oneflow_lite/error.h"

namespace ofl::ops {

namespace {
struct Registry {
  std::shared_mutex mu;
  std::map<std::string, std::unique_ptr<const OpSchema>, std::less<>> ops;
};
// Never destroyed: ops may be called while the process exits.
Registry& GetRegistry() {
  static auto* registry = new Registry();
  return *registry;
}
}  // namespace

namespace {
// Fills a form's defaults and refuses a definition its form cannot run.
struct FormCheck {
  OpSchema& op;
  void Need(bool ok, const char* what) const {
    if (!ok) throw InvalidArgument("register_op: op '" + op.name + "': " + what);
  }
  void SingleInOut(const char* form) const {
    Need(op.num_inputs == 1 && op.num_outputs == 1,
         (std::string("the ") + form + " form takes one input and one output").c_str());
  }
  void operator()(KernelForm& f) const {
    if (f.kernel.empty()) f.kernel = op.name;
    Need(static_cast<bool>(op.infer), "the kernel form needs infer or infer1");
  }
  void operator()(ViewForm& f) const {
    SingleInOut("view");
    Need(static_cast<bool>(f.geometry), "the view form needs its geometry");
  }
  void operator()(ComposeForm& f) const {
    Need(static_cast<bool>(f.compose), "the compose form needs its compose function");
  }
  void operator()(InPlaceForm& f) const {
    if (f.kernel.empty()) f.kernel = op.name;
    Need(op.num_inputs >= 1 && op.num_outputs == 1,
         "the in-place form writes input 0 and returns it");
    Need(static_cast<bool>(op.infer), "the in-place form needs infer");
  }
  void operator()(DeviceCopyForm&) const {
    SingleInOut("device-copy");
    Need(static_cast<bool>(op.infer1), "the device-copy form needs infer1");
    Need(op.attrs.index("device") >= 0 &&
             op.attrs.defs()[op.attrs.index("device")].type == AttrType::kString,
         "the device-copy form needs a string attribute 'device'");
  }
};

const std::string kCopyKernel = "copy";
}  // namespace

const std::string& OpSchema::kernel_name() const {
  if (const KernelForm* k = as<KernelForm>()) return k->kernel;
  if (const InPlaceForm* k = as<InPlaceForm>()) return k->kernel;
  if (is_view()) return kCopyKernel;  // a view copies where strides allow none
  return name;                        // compose and device copy run no kernel of their own
}

const OpSchema* RegisterOp(OpSchema schema) {
  if (schema.backward_name.empty()) schema.backward_name = CamelCase(schema.name) + "Backward";
  if (schema.infer1 && !schema.infer) {
    schema.infer = [f = schema.infer1](const std::vector<TensorMeta>& in, const Attrs& attrs) {
      return std::vector<TensorMeta>{f(in[0], attrs)};
    };
  }
  std::visit(FormCheck{schema}, schema.form);
  schema.attrs.set_op(schema.name);
  schema.attrs.Validate("register_op: op '" + schema.name + "'");
  Registry& reg = GetRegistry();
  std::unique_lock lock(reg.mu);
  auto it = reg.ops.find(schema.name);
  if (it != reg.ops.end()) {
    throw InvalidArgument("register_op: an op named '" + schema.name + "' exists already" +
                          (it->second->builtin ? " (a built-in op)" : ""));
  }
  schema.id = static_cast<int>(reg.ops.size());  // ops are never removed
  auto owned = std::make_unique<const OpSchema>(std::move(schema));
  const OpSchema* p = owned.get();
  reg.ops.emplace(p->name, std::move(owned));
  return p;
}

const OpSchema* FindOp(const std::string& name) {
  Registry& reg = GetRegistry();
  std::shared_lock lock(reg.mu);
  auto it = reg.ops.find(name);
  return it == reg.ops.end() ? nullptr : it->second.get();
}

const OpSchema& BuiltinOp(const char* name) {
  const OpSchema* op = FindOp(name);
  if (op == nullptr)
    throw Error(std::string("internal: the built-in op '") + name + "' is missing");
  return *op;
}

std::string CamelCase(const std::string& name) {
  std::string out;
  bool up = true;
  for (char c : name) {
    if (c == '_') {
      up = true;
      continue;
    }
    out.push_back(up && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
    up = false;
  }
  return out;
}

}  // namespace ofl::ops
