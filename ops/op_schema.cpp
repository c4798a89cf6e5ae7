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

const OpSchema* RegisterOp(OpSchema schema) {
  // A view op copies (where its strides allow no view, or OFL_DISABLE_VIEW) with "copy".
  if (schema.kernel.empty()) schema.kernel = schema.view ? "copy" : schema.name;
  if (schema.backward_name.empty()) schema.backward_name = CamelCase(schema.name) + "Backward";
  if (schema.infer1 && !schema.infer) {
    schema.infer = [f = schema.infer1](const std::vector<TensorMeta>& in, const Attrs& attrs) {
      return std::vector<TensorMeta>{f(in[0], attrs)};
    };
  }
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
