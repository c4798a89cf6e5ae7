#include "oneflow_lite/attrs.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <sstream>

#include "oneflow_lite/error.h"
#include "oneflow_lite/identifier.h"

namespace ofl {

// How the values are laid out: each attribute takes consecutive int64 words, in declaration
// order. An int, a bool and a dtype: one word. A double: its bits. A scalar: its kind, then its
// bits. An int list or a shape: its length, then the elements. A string: its length in bytes, then
// its bytes packed into words.

const char* attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return "int";
    case AttrType::kInts:
      return "int list";
    case AttrType::kDouble:
      return "double";
    case AttrType::kBool:
      return "bool";
    case AttrType::kDType:
      return "dtype";
    case AttrType::kShape:
      return "shape";
    case AttrType::kString:
      return "string";
    case AttrType::kScalar:
      return "scalar";
  }
  return "unknown";
}

namespace {
std::string AOrAn(AttrType type) {
  const std::string name = attr_type_name(type);
  return (name[0] == 'i' ? "an " : "a ") + name;
}
double BitsToDouble(int64_t w) {
  double d;
  std::memcpy(&d, &w, sizeof d);
  return d;
}
int64_t DoubleToBits(double d) {
  int64_t w;
  std::memcpy(&w, &d, sizeof w);
  return w;
}
std::string DoubleStr(double d) {
  std::ostringstream os;
  os.precision(17);
  os << d;
  return os.str();
}
}  // namespace

// ---- AttrSchema ----------------------------------------------------------------------------

std::string AttrSchema::str() const {
  if (defs_.empty()) return "none";
  std::string out;
  for (const AttrDef& d : defs_) {
    if (!out.empty()) out += ", ";
    out += d.name + " (" + attr_type_name(d.type) + ")";
  }
  return out;
}

void AttrSchema::Validate(const std::string& who) const {
  for (size_t i = 0; i < defs_.size(); ++i) {
    if (!IsLowerIdentifier(defs_[i].name)) {
      throw InvalidArgument(who + ": the attribute name '" + defs_[i].name +
                            "' is not a lower-case identifier ([a-z][a-z0-9_]*)");
    }
    if (static_cast<uint8_t>(defs_[i].type) > static_cast<uint8_t>(AttrType::kScalar)) {
      throw InvalidArgument(who + ": the attribute '" + defs_[i].name + "' has no valid type (" +
                            std::to_string(static_cast<int>(defs_[i].type)) + ")");
    }
    if (index(defs_[i].name) != static_cast<int>(i)) {
      throw InvalidArgument(who + ": the attribute '" + defs_[i].name + "' is declared twice");
    }
  }
}

AttrSchema AttrSchema::Legacy() {
  AttrSchema s{{"attrs", AttrType::kInts}};
  s.legacy_ = true;
  return s;
}

std::string IntList::str() const {
  std::string out = "[";
  for (size_t i = 0; i < size_; ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(data_[i]);
  }
  return out + "]";
}

// ---- Attrs: storage --------------------------------------------------------------------------

void Attrs::CopyFrom(const Attrs& other) {
  schema_ = other.schema_;
  size_ = other.size_;
  if (other.size_ <= kInline) {
    cap_ = kInline;
    if (size_ > 0) std::memcpy(inline_, other.words(), size_ * sizeof(int64_t));
  } else {
    cap_ = size_;
    heap_ = static_cast<int64_t*>(std::malloc(size_ * sizeof(int64_t)));
    if (heap_ == nullptr) throw std::bad_alloc();
    std::memcpy(heap_, other.heap_, size_ * sizeof(int64_t));
  }
}

void Attrs::MoveFrom(Attrs* other) noexcept {
  schema_ = other->schema_;
  size_ = other->size_;
  cap_ = other->cap_;
  if (cap_ <= kInline) {
    if (size_ > 0) std::memcpy(inline_, other->inline_, size_ * sizeof(int64_t));
  } else {
    heap_ = other->heap_;
  }
  other->schema_ = nullptr;
  other->size_ = 0;
  other->cap_ = kInline;
}

Attrs& Attrs::AssignSlow(const Attrs& other) {
  if (this != &other) {
    Attrs copy(other);
    Release();
    MoveFrom(&copy);
  }
  return *this;
}

Attrs& Attrs::operator=(Attrs&& other) noexcept {
  if (this != &other) {
    Release();
    MoveFrom(&other);
  }
  return *this;
}

void Attrs::Grow(uint32_t n) {
  const uint32_t cap = std::max(cap_ * 2, size_ + n);
  auto* heap = static_cast<int64_t*>(std::malloc(cap * sizeof(int64_t)));
  if (heap == nullptr) throw std::bad_alloc();
  if (size_ > 0) std::memcpy(heap, words(), size_ * sizeof(int64_t));
  if (cap_ > kInline) std::free(heap_);
  heap_ = heap;
  cap_ = cap;
}

// ---- Attrs: construction ---------------------------------------------------------------------

const std::string& Attrs::op() const {
  static const std::string none;
  return schema_ == nullptr ? none : schema_->op();
}

void Attrs::CountMismatch(int n) const {
  throw InvalidArgument(schema_->op() + ": takes " + std::to_string(schema_->size()) +
                        " attributes (" + schema_->str() + "), got " + std::to_string(n));
}

void Attrs::Mismatch(int i, const std::string& given) const {
  const AttrDef& d = schema_->defs()[static_cast<size_t>(i)];
  throw InvalidArgument(schema_->op() + ": the attribute '" + d.name + "' is " + AOrAn(d.type) +
                        ", got " + given);
}

void Attrs::PushInt(int i, int64_t v) {
  switch (schema_->defs()[static_cast<size_t>(i)].type) {
    case AttrType::kInt:
      return Append(v);
    case AttrType::kDouble:
      return Append(DoubleToBits(static_cast<double>(v)));
    case AttrType::kScalar:
      return PushScalar(i, Scalar(v));
    default:
      Mismatch(i, "the int " + std::to_string(v));
  }
}

void Attrs::PushDouble(int i, double v) {
  switch (schema_->defs()[static_cast<size_t>(i)].type) {
    case AttrType::kDouble:
      return Append(DoubleToBits(v));
    case AttrType::kScalar:
      return PushScalar(i, Scalar(v));
    default:
      Mismatch(i, "the double " + DoubleStr(v));
  }
}

void Attrs::PushBool(int i, bool v) {
  switch (schema_->defs()[static_cast<size_t>(i)].type) {
    case AttrType::kBool:
      return Append(v ? 1 : 0);
    case AttrType::kScalar:
      return PushScalar(i, Scalar(v));
    default:
      Mismatch(i, std::string("the bool ") + (v ? "true" : "false"));
  }
}

void Attrs::PushDType(int i, DType v) {
  if (element_size(v) == 0) Mismatch(i, "no dtype (" + std::to_string(static_cast<int>(v)) + ")");
  if (schema_->defs()[static_cast<size_t>(i)].type != AttrType::kDType) {
    Mismatch(i, "the dtype " + to_string(v));
  }
  Append(static_cast<int64_t>(v));
}

void Attrs::PushScalar(int i, const Scalar& v) {
  if (schema_->defs()[static_cast<size_t>(i)].type != AttrType::kScalar) {
    Mismatch(i, "the scalar " + v.str());
  }
  int64_t w[2] = {static_cast<int64_t>(v.kind()), 0};
  switch (v.kind()) {
    case Scalar::Kind::kDouble:
      w[1] = DoubleToBits(v.double_value());
      break;
    case Scalar::Kind::kUInt64:
      w[1] = static_cast<int64_t>(v.uint64_value());
      break;
    default:
      w[1] = v.int64_value();
      break;
  }
  Append(w, 2);
}

void Attrs::ListMismatch(int i, IntList v, AttrType given) const {
  Mismatch(i, std::string(given == AttrType::kShape ? "the shape " : "the int list ") + v.str());
}

void Attrs::PushString(int i, std::string_view v) {
  if (schema_->defs()[static_cast<size_t>(i)].type != AttrType::kString) {
    Mismatch(i, "the string '" + std::string(v) + "'");
  }
  Append(static_cast<int64_t>(v.size()));
  const uint32_t n = static_cast<uint32_t>((v.size() + 7) / 8);
  const uint32_t at = size_;
  for (uint32_t k = 0; k < n; ++k) Append(int64_t{0});
  if (!v.empty()) std::memcpy(words() + at, v.data(), v.size());
}

void Attrs::PushAttrValue(int i, const AttrValue& v) {
  switch (v.type_) {
    case AttrType::kInt:
      if (v.scalar_.kind() == Scalar::Kind::kUInt64) {
        Mismatch(i, "the integer " + v.scalar_.str() + " (past int64's range)");
      }
      return PushInt(i, v.scalar_.int64_value());
    case AttrType::kDouble:
      return PushDouble(i, v.scalar_.double_value());
    case AttrType::kBool:
      return PushBool(i, v.scalar_.int64_value() != 0);
    case AttrType::kDType:
      return PushDType(i, static_cast<DType>(v.scalar_.int64_value()));
    case AttrType::kScalar:
      return PushScalar(i, v.scalar_);
    case AttrType::kInts:
      return PushInts(i, IntList(v.ints_), AttrType::kInts);
    case AttrType::kShape:
      return PushInts(i, IntList(v.ints_), AttrType::kShape);
    case AttrType::kString:
      return PushString(i, v.str_);
  }
}

Attrs::Attrs(const AttrSchema& schema, const std::vector<NamedAttr>& named) : schema_(&schema) {
  const int n = schema.size();
  std::vector<const AttrValue*> by_index(static_cast<size_t>(n), nullptr);
  for (const NamedAttr& a : named) {
    const int i = schema.index(a.name);
    if (i < 0) {
      throw InvalidArgument(schema.op() + ": has no attribute '" + a.name +
                            "'; its attributes: " + schema.str());
    }
    if (by_index[static_cast<size_t>(i)] != nullptr) {
      throw InvalidArgument(schema.op() + ": the attribute '" + a.name + "' is given twice");
    }
    by_index[static_cast<size_t>(i)] = &a.value;
  }
  for (int i = 0; i < n; ++i) {
    const AttrValue* v = by_index[static_cast<size_t>(i)];
    if (v == nullptr) {
      const AttrDef& d = schema.defs()[static_cast<size_t>(i)];
      throw InvalidArgument(schema.op() + ": the attribute '" + d.name + "' (" +
                            attr_type_name(d.type) +
                            ") is missing; its attributes: " + schema.str());
    }
    PushAttrValue(i, *v);
  }
}

// ---- Attrs: reading --------------------------------------------------------------------------

uint32_t Attrs::Words(AttrType type, const int64_t* at) {
  switch (type) {
    case AttrType::kInts:
    case AttrType::kShape:
      return 1 + static_cast<uint32_t>(at[0]);
    case AttrType::kString:
      return 1 + static_cast<uint32_t>((at[0] + 7) / 8);
    case AttrType::kScalar:
      return 2;
    default:
      return 1;
  }
}

const int64_t* Attrs::At(int index) const {
  const int64_t* at = words();
  for (int k = 0; k < index; ++k) at += Words(schema_->defs()[static_cast<size_t>(k)].type, at);
  return at;
}

void Attrs::FindFailed(std::string_view name, AttrType want) const {
  const int i = schema_ == nullptr ? -1 : schema_->index(name);
  if (i < 0) {
    const std::string of = schema_ == nullptr ? "" : schema_->op() + ": ";
    throw InvalidArgument(of + "has no attribute '" + std::string(name) +
                          "'; its attributes: " + (schema_ == nullptr ? "none" : schema_->str()));
  }
  const AttrType type = schema_->defs()[static_cast<size_t>(i)].type;
  throw InvalidArgument(schema_->op() + ": the attribute '" + std::string(name) + "' is " +
                        AOrAn(type) + ", read as " + AOrAn(want));
}

double Attrs::get_double(std::string_view name) const {
  return BitsToDouble(*Find(name, AttrType::kDouble));
}

std::string Attrs::get_string(std::string_view name) const {
  const int64_t* at = Find(name, AttrType::kString);
  return std::string(reinterpret_cast<const char*>(at + 1), static_cast<size_t>(at[0]));
}

Scalar Attrs::get_scalar(std::string_view name) const {
  const int64_t* at = Find(name, AttrType::kScalar);
  switch (static_cast<Scalar::Kind>(at[0])) {
    case Scalar::Kind::kBool:
      return Scalar(at[1] != 0);
    case Scalar::Kind::kUInt64:
      return Scalar(static_cast<uint64_t>(at[1]));
    case Scalar::Kind::kDouble:
      return Scalar(BitsToDouble(at[1]));
    default:
      return Scalar(at[1]);
  }
}

std::string Attrs::ValueStr(int index) const {
  const AttrDef& d = schema_->defs()[static_cast<size_t>(index)];
  const int64_t* at = At(index);
  switch (d.type) {
    case AttrType::kInt:
      return std::to_string(at[0]);
    case AttrType::kDouble:
      return DoubleStr(BitsToDouble(at[0]));
    case AttrType::kBool:
      return at[0] != 0 ? "true" : "false";
    case AttrType::kDType:
      return to_string(static_cast<DType>(at[0]));
    case AttrType::kScalar:
      return get_scalar(d.name).str();
    case AttrType::kInts:
    case AttrType::kShape:
      return IntList(at + 1, static_cast<size_t>(at[0])).str();
    case AttrType::kString:
      return "'" + get_string(d.name) + "'";
  }
  return "?";
}

std::string Attrs::str() const {
  std::string out;
  for (int i = 0; i < size(); ++i) {
    if (i > 0) out += ", ";
    out += schema_->defs()[static_cast<size_t>(i)].name + "=" + ValueStr(i);
  }
  return out;
}

bool Attrs::operator==(const Attrs& other) const {
  return schema_ == other.schema_ && size_ == other.size_ &&
         (size_ == 0 || std::memcmp(words(), other.words(), size_ * sizeof(int64_t)) == 0);
}

std::vector<int64_t> Attrs::LegacyInts() const {
  if (schema_ == nullptr) return {};
  if (!schema_->legacy()) {
    throw Error(schema_->op() + ": its attributes are typed (" + schema_->str() +
                "); read them by name (get_int, get_ints, ...)");
  }
  return get_ints("attrs").vec();
}

}  // namespace ofl
