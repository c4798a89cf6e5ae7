// Placement and Sbp: the value types that describe a global tensor's layout. A placement is the
// device type and the ranks that hold the tensor's shards (in the order of their parallel index);
// an Sbp says how the logical tensor maps to those shards: split along an axis, broadcast (every
// rank holds all of it) or partial_sum (the logical tensor is the sum of the shards). Pure values:
// no MPI, no memory. The rules that use them live in ops/sbp_rules.h.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ofl {

class Placement {
 public:
  // Throws InvalidArgument when device_type is empty, or ranks is empty, has a negative rank or
  // a duplicate. Ranks keep the order given: a rank's position is its parallel index.
  Placement(std::string device_type, std::vector<int> ranks);

  const std::string& device_type() const { return device_type_; }
  const std::vector<int>& ranks() const { return ranks_; }
  // Placement(type="cpu", ranks=[0, 1, 2])
  std::string str() const;

  int size() const { return static_cast<int>(ranks_.size()); }
  bool contains(int rank) const { return index_of(rank) >= 0; }
  // The parallel index of `rank` (its position in ranks()), or -1 when the placement lacks it.
  int index_of(int rank) const;

  friend bool operator==(const Placement& a, const Placement& b) {
    return a.device_type_ == b.device_type_ && a.ranks_ == b.ranks_;
  }
  friend bool operator!=(const Placement& a, const Placement& b) { return !(a == b); }

 private:
  std::string device_type_;
  std::vector<int> ranks_;
};

class Sbp {
 public:
  // Throws InvalidArgument when axis < 0; that the axis is below the tensor's rank is checked by
  // the rules that know the shape (ops/sbp_rules.h).
  static Sbp split(int axis);
  static Sbp broadcast() { return Sbp(Kind::kBroadcast, -1); }
  static Sbp partial_sum() { return Sbp(Kind::kPartialSum, -1); }

  bool is_split() const { return kind_ == Kind::kSplit; }
  bool is_broadcast() const { return kind_ == Kind::kBroadcast; }
  bool is_partial_sum() const { return kind_ == Kind::kPartialSum; }
  // The split axis; -1 for broadcast and partial_sum.
  int axis() const { return axis_; }
  // "S(1)", "B" or "P", as OneFlow prints an SBP.
  std::string str() const;

  friend bool operator==(const Sbp& a, const Sbp& b) {
    return a.kind_ == b.kind_ && a.axis_ == b.axis_;
  }
  friend bool operator!=(const Sbp& a, const Sbp& b) { return !(a == b); }

 private:
  enum class Kind { kSplit, kBroadcast, kPartialSum };
  Sbp(Kind kind, int axis) : kind_(kind), axis_(axis) {}

  Kind kind_;
  int axis_;
};

std::ostream& operator<<(std::ostream& os, const Placement& p);
std::ostream& operator<<(std::ostream& os, const Sbp& sbp);

}  // namespace ofl
