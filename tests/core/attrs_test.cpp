// Attrs: typed op attributes, positional and by name, read by name, with the conversions the
// declarations allow, the errors naming the op, the attribute and the value, printing, equality,
// copies of inline and heap-held values, and the deprecated integers of an op without
// declarations.
#include "oneflow_lite/attrs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"

namespace ofl {
namespace {

AttrSchema Named(const char* op, std::initializer_list<AttrDef> defs) {
  AttrSchema s(defs);
  s.set_op(op);
  return s;
}

void ExpectThrowsWith(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    for (const std::string& p : parts) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\nmissing: " << p;
    }
  }
}

TEST(AttrsTest, EveryTypeRoundTripsPositionally) {
  const AttrSchema s = Named("every", {{"i", AttrType::kInt},
                                       {"is", AttrType::kInts},
                                       {"d", AttrType::kDouble},
                                       {"b", AttrType::kBool},
                                       {"t", AttrType::kDType},
                                       {"sh", AttrType::kShape},
                                       {"s", AttrType::kString},
                                       {"v", AttrType::kScalar}});
  const Attrs a(s, int64_t{-7}, std::vector<int64_t>{1, -1, 3}, 2.5, true, DType::kBFloat16,
                Shape({4, 0, 2}), std::string("hello, world"), Scalar(uint64_t{1} << 63));
  EXPECT_EQ(a.size(), 8);
  EXPECT_EQ(a.get_int("i"), -7);
  EXPECT_EQ(a.get_ints("is").vec(), (std::vector<int64_t>{1, -1, 3}));
  EXPECT_EQ(a.get_double("d"), 2.5);
  EXPECT_TRUE(a.get_bool("b"));
  EXPECT_EQ(a.get_dtype("t"), DType::kBFloat16);
  EXPECT_EQ(a.get_shape("sh"), Shape({4, 0, 2}));
  EXPECT_EQ(a.get_string("s"), "hello, world");
  EXPECT_EQ(a.get_scalar("v").kind(), Scalar::Kind::kUInt64);
  EXPECT_EQ(a.get_scalar("v").uint64_value(), uint64_t{1} << 63);
  EXPECT_EQ(a.str(),
            "i=-7, is=[1, -1, 3], d=2.5, b=true, t=bfloat16, sh=[4, 0, 2], s='hello, world', "
            "v=9223372036854775808");
}

TEST(AttrsTest, ByNameInAnyOrderEqualsPositional) {
  const AttrSchema s = Named(
      "narrow", {{"dim", AttrType::kInt}, {"start", AttrType::kInt}, {"length", AttrType::kInt}});
  const Attrs named(s, {{"length", 2}, {"dim", 1}, {"start", 0}});
  const Attrs positional(s, 1, 0, 2);
  EXPECT_EQ(named, positional);
  EXPECT_EQ(named.str(), "dim=1, start=0, length=2");
  EXPECT_NE(named, Attrs(s, 1, 0, 3));
  EXPECT_NE(Attrs(), named);
  EXPECT_EQ(Attrs(), Attrs());
  EXPECT_EQ(Attrs().str(), "");
}

TEST(AttrsTest, DeclaredConversions) {
  const AttrSchema s = Named("conv", {{"d", AttrType::kDouble},
                                      {"v", AttrType::kScalar},
                                      {"sh", AttrType::kShape},
                                      {"is", AttrType::kInts}});
  // An int to a double or a scalar (exactly), an int list to a shape, a shape to an int list.
  const Attrs a(s, 3, int64_t{1} << 60, std::vector<int64_t>{2, 3}, Shape({5}));
  EXPECT_EQ(a.get_double("d"), 3.0);
  EXPECT_EQ(a.get_scalar("v").kind(), Scalar::Kind::kInt64);
  EXPECT_EQ(a.get_scalar("v").int64_value(), int64_t{1} << 60);
  EXPECT_EQ(a.get_shape("sh"), Shape({2, 3}));
  EXPECT_EQ(a.get_ints("sh").vec(), (std::vector<int64_t>{2, 3}));  // a list reads as either
  EXPECT_EQ(a.get_shape("is"), Shape({5}));
  const Attrs b(s, {{"d", 1.5}, {"v", true}, {"sh", {7}}, {"is", Shape({})}});
  EXPECT_EQ(b.get_scalar("v").kind(), Scalar::Kind::kBool);
  EXPECT_TRUE(b.get_ints("is").empty());
  EXPECT_EQ(b.str(), "d=1.5, v=True, sh=[7], is=[]");
}

TEST(AttrsTest, ErrorsNameTheOpTheAttributeAndTheValue) {
  const AttrSchema s = Named("myop", {{"alpha", AttrType::kDouble}, {"dims", AttrType::kInts}});
  ExpectThrowsWith([&] { Attrs(s, 1.0); },
                   {"myop", "takes 2 attributes", "alpha (double), dims (int list)", "got 1"});
  ExpectThrowsWith([&] { Attrs(s, "x", std::vector<int64_t>{}); },
                   {"myop", "'alpha' is a double", "the string 'x'"});
  ExpectThrowsWith([&] { Attrs(s, 1.0, 2); }, {"myop", "'dims' is an int list", "the int 2"});
  ExpectThrowsWith([&] { Attrs(s, {{"alpha", 1.0}}); }, {"myop", "'dims' (int list) is missing"});
  ExpectThrowsWith(
      [&] {
        Attrs(s, {{"alpha", 1.0}, {"dims", {}}, {"beta", 1}});
      },
      {"myop", "no attribute 'beta'", "alpha (double), dims (int list)"});
  ExpectThrowsWith(
      [&] {
        Attrs(s, {{"alpha", 1.0}, {"alpha", 2.0}, {"dims", {}}});
      },
      {"myop", "'alpha' is given twice"});
  ExpectThrowsWith(
      [&] {
        Attrs(s, {{"alpha", std::numeric_limits<uint64_t>::max()}, {"dims", {}}});
      },
      {"myop", "'alpha' is a double", "past int64's range"});
  const Attrs a(s, 1.0, std::vector<int64_t>{0});
  ExpectThrowsWith([&] { a.get_int("alpha"); }, {"myop", "'alpha' is a double, read as an int"});
  ExpectThrowsWith([&] { a.get_double("beta"); }, {"myop", "no attribute 'beta'"});
  ExpectThrowsWith([&] { Attrs().get_int("x"); }, {"no attribute 'x'", "none"});
  ExpectThrowsWith([&] { Attrs(s, std::vector<int64_t>{1}, std::vector<int64_t>{}); },
                   {"myop", "'alpha' is a double", "the int list [1]"});
  ExpectThrowsWith([&] { Attrs(s, Shape({2}), std::vector<int64_t>{}); },
                   {"myop", "'alpha' is a double", "the shape [2]"});
  ExpectThrowsWith([&] { Attrs(s, 1.0, Scalar(2.5)); },
                   {"myop", "'dims' is an int list", "the scalar 2.5"});
  const AttrSchema t = Named("typed", {{"t", AttrType::kDType}});
  ExpectThrowsWith([&] { Attrs(t, static_cast<DType>(42)); }, {"typed", "'t'", "no dtype (42)"});
}

TEST(AttrsTest, SchemaValidation) {
  EXPECT_NO_THROW(AttrSchema({{"a_1", AttrType::kInt}}).Validate("x"));
  ExpectThrowsWith(
      [] {
        AttrSchema({{"1a", AttrType::kInt}}).Validate("register_op: op 'x'");
      },
      {"register_op: op 'x'", "'1a'", "lower-case identifier"});
  ExpectThrowsWith(
      [] {
        AttrSchema({{"a", AttrType::kInt}, {"a", AttrType::kBool}}).Validate("w");
      },
      {"w", "'a' is declared twice"});
  ExpectThrowsWith(
      [] {
        AttrSchema({{"a", static_cast<AttrType>(99)}}).Validate("w");
      },
      {"w", "'a'", "no valid type"});
  EXPECT_EQ(AttrSchema().str(), "none");
}

TEST(AttrsTest, LongValuesLiveOnTheHeapAndCopy) {
  const AttrSchema s = Named("long", {{"is", AttrType::kInts}, {"s", AttrType::kString}});
  std::vector<int64_t> many(40);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int64_t>(i * i);
  const std::string text(100, 'z');
  Attrs a(s, many, text);
  Attrs b = a;  // deep copy
  Attrs c(std::move(a));
  EXPECT_EQ(b, c);
  EXPECT_EQ(b.get_ints("is").vec(), many);
  EXPECT_EQ(c.get_string("s"), text);
  Attrs d(s, std::vector<int64_t>{1}, "");
  d = b;  // heap over inline
  EXPECT_EQ(d.get_ints("is").vec(), many);
  b = Attrs(s, std::vector<int64_t>{}, "x");  // inline over heap
  EXPECT_EQ(b.get_string("s"), "x");
  EXPECT_TRUE(b.get_ints("is").empty());
  d = d;  // NOLINT: self-assignment keeps the values
  EXPECT_EQ(d.get_string("s"), text);
}

TEST(AttrsTest, LegacyIntegersOfAnOpWithoutDeclarations) {
  AttrSchema legacy = AttrSchema::Legacy();
  legacy.set_op("old");
  EXPECT_TRUE(legacy.legacy());
  const Attrs a(legacy, std::vector<int64_t>{4, 5});
  EXPECT_EQ(a.LegacyInts(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(a.get_ints("attrs").vec(), (std::vector<int64_t>{4, 5}));
  const AttrSchema typed = Named("new", {{"n", AttrType::kInt}});
  try {
    (void)Attrs(typed, 1).LegacyInts();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("new: its attributes are typed (n (int))"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(Attrs().LegacyInts().empty());
}

}  // namespace
}  // namespace ofl
