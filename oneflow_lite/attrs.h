// Typed op attributes: what an op call passes beside its tensors (repeat's counts, narrow's dim,
// start and length, fill_'s value). An op declares each attribute by name and type (AttrSchema);
// a call's values (Attrs) follow the declaration; the op's checks, inference, kernels and backward
// read them by name (attrs.get_ints("repeats")), and traces and error messages print them by name
// ("dim=1, start=0, length=2").
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "oneflow_lite/dtype.h"
#include "oneflow_lite/scalar.h"
#include "oneflow_lite/shape.h"

namespace ofl {

enum class AttrType : uint8_t {
  kInt,     // int64_t
  kInts,    // a list of int64_t (may hold -1 and other markers: reshape's shape)
  kDouble,  // double
  kBool,    // bool
  kDType,   // DType
  kShape,   // Shape (sizes)
  kString,  // std::string
  kScalar,  // Scalar: a bool, an int64, a uint64 or a double, kept exactly (fill_'s value)
};
// "int", "int list", "double", "bool", "dtype", "shape", "string", "scalar".
const char* attr_type_name(AttrType type);

struct AttrDef {
  std::string name;  // a lower-case identifier, unique within the op
  AttrType type = AttrType::kInt;
};

// An op's attributes, in the order a positional call passes them. Kept for the life of the
// process by the op's registration, which names it after the op (for messages).
class AttrSchema {
 public:
  AttrSchema() = default;
  AttrSchema(std::initializer_list<AttrDef> defs) : defs_(defs) {}  // NOLINT
  explicit AttrSchema(std::vector<AttrDef> defs) : defs_(std::move(defs)) {}

  const std::string& op() const { return op_; }
  void set_op(std::string op) { op_ = std::move(op); }
  const std::vector<AttrDef>& defs() const { return defs_; }
  int size() const { return static_cast<int>(defs_.size()); }
  // The index of `name`, or -1. (Inline, with the names compared by hand: each op call reads its
  // attributes a few times, and a call of memcmp per name would be most of the cost.)
  int index(std::string_view name) const {
    for (size_t i = 0; i < defs_.size(); ++i) {
      const std::string& n = defs_[i].name;
      if (n.size() != name.size()) continue;
      size_t k = 0;
      while (k < n.size() && n[k] == name[k]) ++k;
      if (k == n.size()) return static_cast<int>(i);
    }
    return -1;
  }
  // "dim (int), start (int), length (int)"; "none" without attributes.
  std::string str() const;
  // InvalidArgument naming `who` for a name that is no lower-case identifier or is declared twice.
  void Validate(const std::string& who) const;

  // An op of a program registered without declarations (extension.h's OpDef before typed
  // attributes): one int list named "attrs", passed as call_op's integers. Deprecated.
  bool legacy() const { return legacy_; }
  static AttrSchema Legacy();

 private:
  std::string op_;
  std::vector<AttrDef> defs_;
  bool legacy_ = false;
};

// A read-only run of int64s (an int list attribute, a std::vector, a Shape's dims); it does not
// own them.
class IntList {
 public:
  IntList() = default;
  IntList(const int64_t* data, size_t size) : data_(data), size_(size) {}
  IntList(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}        // NOLINT
  IntList(const Shape& s) : data_(s.data()), size_(static_cast<size_t>(s.ndim())) {}  // NOLINT
  // As a parameter only (InferRepeat(s, {2, 3}, ...)): the list's elements live to the end of
  // the full expression, as for C++26's std::span of an initializer_list.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  IntList(std::initializer_list<int64_t> v) : data_(v.begin()), size_(v.size()) {}  // NOLINT
#pragma GCC diagnostic pop
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* data() const { return data_; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t operator[](size_t i) const { return data_[i]; }
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  std::string str() const;  // "[2, 3]"

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

// One attribute value as a program names it for call_op ({"alpha", 2.0}, {"dims", {0, 1}}).
class AttrValue {
 public:
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  AttrValue(T v) {  // NOLINT(google-explicit-constructor)
    if constexpr (std::is_same_v<T, bool>) {
      type_ = AttrType::kBool;
      scalar_ = Scalar(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      type_ = AttrType::kDouble;
      scalar_ = Scalar(static_cast<double>(v));
    } else {
      type_ = AttrType::kInt;
      scalar_ = Scalar(v);  // an unsigned value past int64's range stays a uint64
    }
  }
  AttrValue(DType v) : type_(AttrType::kDType), scalar_(static_cast<int64_t>(v)) {}   // NOLINT
  AttrValue(const Scalar& v) : type_(AttrType::kScalar), scalar_(v) {}                // NOLINT
  AttrValue(std::initializer_list<int64_t> v) : type_(AttrType::kInts), ints_(v) {}   // NOLINT
  AttrValue(std::vector<int64_t> v) : type_(AttrType::kInts), ints_(std::move(v)) {}  // NOLINT
  AttrValue(const Shape& v) : type_(AttrType::kShape), ints_(v.vec()) {}              // NOLINT
  AttrValue(std::string v) : type_(AttrType::kString), str_(std::move(v)) {}          // NOLINT
  AttrValue(const char* v) : type_(AttrType::kString), str_(v) {}                     // NOLINT

  AttrType type() const { return type_; }

 private:
  friend class Attrs;
  AttrType type_;
  Scalar scalar_;  // kInt, kDouble, kBool, kDType (its integer), kScalar
  std::vector<int64_t> ints_;
  std::string str_;
};

struct NamedAttr {
  std::string name;
  AttrValue value;
};

// A call's attributes by name: {{"alpha", 2.0}, {"dims", {0, 1}}}, or a std::vector<NamedAttr>
// built at run time. (Its own type, so that call_op(name, inputs, {2}) cannot mean two sizes.)
class NamedAttrs {
 public:
  NamedAttrs() = default;
  NamedAttrs(std::initializer_list<NamedAttr> attrs) : list_(attrs) {}   // NOLINT
  NamedAttrs(std::vector<NamedAttr> attrs) : list_(std::move(attrs)) {}  // NOLINT
  const std::vector<NamedAttr>& list() const { return list_; }
  bool empty() const { return list_.empty(); }

 private:
  std::vector<NamedAttr> list_;
};

// The attribute values of one op call, in its op's declaration order, read by name. Holds a small
// call's values inline (no allocation); copying it copies them.
class Attrs {
 public:
  Attrs() = default;  // no attributes: an op that declares none

  // Positional: one value per declared attribute, in order, each of its type (an int list and a
  // shape take each other's values; an int converts to a double or a scalar, a bool or a double
  // to a scalar). InvalidArgument naming the op, the attribute and the value otherwise.
  template <class... V>
  explicit Attrs(const AttrSchema& schema, const V&... values) : schema_(&schema) {
    CheckCount(static_cast<int>(sizeof...(V)));
    int i = 0;
    (PushValue(i++, values), ...);
  }
  // By name, in any order: each declared attribute exactly once (the same conversions).
  Attrs(const AttrSchema& schema, const std::vector<NamedAttr>& named);

  Attrs(const Attrs& other) {
    if (other.size_ <= kInline) {  // the usual case: a fixed copy, no allocation
      schema_ = other.schema_;
      size_ = other.size_;
      std::memcpy(inline_, other.words(), sizeof inline_);
    } else {
      CopyFrom(other);
    }
  }
  Attrs(Attrs&& other) noexcept { MoveFrom(&other); }
  Attrs& operator=(const Attrs& other) {
    if (this != &other && cap_ <= kInline && other.size_ <= kInline) {
      schema_ = other.schema_;
      size_ = other.size_;
      std::memcpy(inline_, other.words(), sizeof inline_);
      return *this;
    }
    return AssignSlow(other);
  }
  Attrs& operator=(Attrs&& other) noexcept;
  ~Attrs() { Release(); }

  // The declarations these values follow (null: no attributes).
  const AttrSchema* schema() const { return schema_; }
  const std::string& op() const;
  int size() const { return schema_ == nullptr ? 0 : schema_->size(); }

  // The attribute `name` of the type the getter names: InvalidArgument naming the op when it has
  // no such attribute or declares it with another type (an int list and a shape read as either).
  int64_t get_int(std::string_view name) const { return *Find(name, AttrType::kInt); }
  IntList get_ints(std::string_view name) const {  // valid while these Attrs live
    const int64_t* at = Find(name, AttrType::kInts);
    return IntList(at + 1, static_cast<size_t>(at[0]));
  }
  double get_double(std::string_view name) const;
  bool get_bool(std::string_view name) const { return *Find(name, AttrType::kBool) != 0; }
  DType get_dtype(std::string_view name) const {
    return static_cast<DType>(*Find(name, AttrType::kDType));
  }
  Shape get_shape(std::string_view name) const {
    const int64_t* at = Find(name, AttrType::kShape);
    return Shape(at + 1, static_cast<int>(at[0]));
  }
  std::string get_string(std::string_view name) const;
  Scalar get_scalar(std::string_view name) const;

  // "dim=1, start=0, length=2"; empty without attributes.
  std::string str() const;
  // The same schema and values.
  bool operator==(const Attrs& other) const;
  bool operator!=(const Attrs& other) const { return !(*this == other); }

  // Deprecated (one release): the integers of an op registered without attribute declarations
  // (AttrSchema::legacy), what an OpDef written for `const std::vector<int64_t>& attrs` gets
  // (extension.h). Empty without attributes; throws Error for an op with typed attributes: read
  // those by name.
  std::vector<int64_t> LegacyInts() const;

 private:
  static constexpr uint32_t kInline = 6;

  template <class T>
  void PushValue(int i, const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      PushBool(i, v);
    } else if constexpr (std::is_integral_v<T>) {
      PushInt(i, static_cast<int64_t>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      PushDouble(i, static_cast<double>(v));
    } else if constexpr (std::is_same_v<T, DType>) {
      PushDType(i, v);
    } else if constexpr (std::is_same_v<T, Scalar>) {
      PushScalar(i, v);
    } else if constexpr (std::is_same_v<T, Shape>) {
      PushInts(i, IntList(v), AttrType::kShape);
    } else if constexpr (std::is_convertible_v<const T&, IntList>) {
      PushInts(i, IntList(v), AttrType::kInts);
    } else if constexpr (std::is_same_v<T, AttrValue>) {
      PushAttrValue(i, v);
    } else {
      static_assert(std::is_convertible_v<const T&, std::string_view>,
                    "an attribute is an integer, a double, a bool, a DType, a Scalar, an int "
                    "list, a Shape or a string");
      PushString(i, std::string_view(v));
    }
  }
  void CheckCount(int n) const {
    if (n != schema_->size()) CountMismatch(n);
  }
  [[noreturn]] void CountMismatch(int n) const;
  void PushInt(int i, int64_t v);
  void PushDouble(int i, double v);
  void PushBool(int i, bool v);
  void PushDType(int i, DType v);
  void PushScalar(int i, const Scalar& v);
  void PushInts(int i, IntList v, AttrType given) {
    if (!IsList(schema_->defs()[static_cast<size_t>(i)].type)) ListMismatch(i, v, given);
    const auto n = static_cast<uint32_t>(v.size());
    if (size_ + 1 + n > cap_) Grow(1 + n);
    int64_t* w = words() + size_;
    w[0] = static_cast<int64_t>(n);
    for (uint32_t k = 0; k < n; ++k) w[1 + k] = v[k];
    size_ += 1 + n;
  }
  [[noreturn]] void ListMismatch(int i, IntList v, AttrType given) const;
  Attrs& AssignSlow(const Attrs& other);
  void PushString(int i, std::string_view v);
  void PushAttrValue(int i, const AttrValue& v);
  [[noreturn]] void Mismatch(int i, const std::string& given) const;
  void Append(const int64_t* src, uint32_t n) {
    if (size_ + n > cap_) Grow(n);
    if (n > 0) std::memcpy(words() + size_, src, n * sizeof(int64_t));
    size_ += n;
  }
  void Append(int64_t word) { Append(&word, 1); }
  void Grow(uint32_t n);  // room for n more words
  // The first word of attribute `name`, checked to be of type `want` (or both lists).
  const int64_t* Find(std::string_view name, AttrType want) const {
    const int i = schema_ == nullptr ? -1 : schema_->index(name);
    if (i >= 0) {
      const AttrType type = schema_->defs()[static_cast<size_t>(i)].type;
      if (type == want || (IsList(type) && IsList(want))) return i == 0 ? words() : At(i);
    }
    FindFailed(name, want);
  }
  [[noreturn]] void FindFailed(std::string_view name, AttrType want) const;
  static bool IsList(AttrType t) { return t == AttrType::kInts || t == AttrType::kShape; }
  const int64_t* At(int index) const;  // the first word of the index-th attribute
  static uint32_t Words(AttrType type, const int64_t* at);
  std::string ValueStr(int index) const;

  const int64_t* words() const { return cap_ <= kInline ? inline_ : heap_; }
  int64_t* words() { return cap_ <= kInline ? inline_ : heap_; }
  void CopyFrom(const Attrs& other);
  void MoveFrom(Attrs* other) noexcept;
  void Release() noexcept {
    if (cap_ > kInline) std::free(heap_);
    cap_ = kInline;
    size_ = 0;
  }

  const AttrSchema* schema_ = nullptr;
  uint32_t size_ = 0;       // words used
  uint32_t cap_ = kInline;  // words held; past kInline they live in heap_
  union {
    int64_t inline_[kInline];
    int64_t* heap_;
  };
};

}  // namespace ofl
