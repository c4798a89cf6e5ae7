#include "oneflow_lite/placement.h"

#include <utility>

#include "oneflow_lite/error.h"

namespace ofl {

namespace {

// "[0, 1, 2]", the way OneFlow prints a placement's ranks.
std::string RanksStr(const std::vector<int>& ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(ranks[i]);
  }
  return s + "]";
}

}  // namespace

Placement::Placement(std::string device_type, std::vector<int> ranks)
    : device_type_(std::move(device_type)), ranks_(std::move(ranks)) {
  if (device_type_.empty()) {
    throw InvalidArgument("Placement: device_type must be non-empty; ranks " + RanksStr(ranks_));
  }
  if (ranks_.empty()) {
    throw InvalidArgument("Placement: ranks must be non-empty; device_type \"" + device_type_ +
                          "\", ranks []");
  }
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (ranks_[i] < 0) {
      throw InvalidArgument("Placement: rank " + std::to_string(ranks_[i]) + " at index " +
                            std::to_string(i) + " is negative; ranks " + RanksStr(ranks_));
    }
    for (size_t j = 0; j < i; ++j) {
      if (ranks_[j] == ranks_[i]) {
        throw InvalidArgument("Placement: rank " + std::to_string(ranks_[i]) +
                              " appears twice (at index " + std::to_string(j) + " and " +
                              std::to_string(i) + "); ranks " + RanksStr(ranks_));
      }
    }
  }
}

std::string Placement::str() const {
  return "Placement(type=\"" + device_type_ + "\", ranks=" + RanksStr(ranks_) + ")";
}

int Placement::index_of(int rank) const {
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (ranks_[i] == rank) return static_cast<int>(i);
  }
  return -1;
}

Sbp Sbp::split(int axis) {
  if (axis < 0) {
    throw InvalidArgument("Sbp::split: axis " + std::to_string(axis) + " must be >= 0");
  }
  return Sbp(Kind::kSplit, axis);
}

std::string Sbp::str() const {
  switch (kind_) {
    case Kind::kSplit:
      return "S(" + std::to_string(axis_) + ")";
    case Kind::kBroadcast:
      return "B";
    case Kind::kPartialSum:
      return "P";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, const Placement& p) { return os << p.str(); }
std::ostream& operator<<(std::ostream& os, const Sbp& sbp) { return os << sbp.str(); }

}  // namespace ofl
