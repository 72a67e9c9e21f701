// The public conversion layer: built-in types, RIVETKIT_FIELDS structs, and the action argument
// adapter (what a client sending the wrong argument gets).

#include <rivetkit/actor.hpp>
#include <rivetkit/convert.hpp>

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace demo {
struct Point {
  std::int64_t x = 0;
  std::int64_t y = 0;
  std::optional<std::string> label;
  bool operator==(const Point&) const = default;
};
RIVETKIT_FIELDS(Point, x, y, label)

struct Shape {
  std::string name;
  std::vector<Point> points;
  std::map<std::string, double> weights;
  bool operator==(const Shape&) const = default;
};
RIVETKIT_FIELDS(Shape, name, points, weights)
}  // namespace demo

namespace rivetkit {
namespace {

TEST(Convert, IntegersAcceptIntsBigintsAndWholeDoubles) {
  EXPECT_EQ(from_value<std::int64_t>(Value{5}), 5);
  EXPECT_EQ(from_value<std::int64_t>(Value{BigInt::from_int64(-7)}), -7);
  EXPECT_EQ(from_value<std::int64_t>(Value{4294967296.0}), 4294967296LL);
  EXPECT_EQ(from_value<std::uint8_t>(Value{255}), 255);
  EXPECT_THROW(from_value<std::uint8_t>(Value{256}), ConversionError);
  EXPECT_THROW(from_value<std::int32_t>(Value{1.5}), ConversionError);
  EXPECT_THROW(from_value<std::int64_t>(Value{"5"}), ConversionError);
  EXPECT_THROW(from_value<std::uint64_t>(Value{-1}), ConversionError);
  EXPECT_THROW(from_value<std::int64_t>(Value{9.3e18}), ConversionError);
}

TEST(Convert, StringsBoolsDoublesBytes) {
  EXPECT_EQ(from_value<std::string>(Value{"hi"}), "hi");
  EXPECT_EQ(from_value<bool>(Value{true}), true);
  EXPECT_THROW(from_value<bool>(Value{1}), ConversionError);
  EXPECT_DOUBLE_EQ(from_value<double>(Value{3}), 3.0);
  EXPECT_EQ(from_value<Bytes>(Value{Bytes{1, 2}}), (Bytes{1, 2}));
  EXPECT_THROW(from_value<Bytes>(Value{"x"}), ConversionError);
}

TEST(Convert, OptionalTreatsNullAndUndefinedAsEmpty) {
  EXPECT_EQ(from_value<std::optional<int>>(Value{}), std::nullopt);
  EXPECT_EQ(from_value<std::optional<int>>(Value{Undefined{}}), std::nullopt);
  EXPECT_EQ(from_value<std::optional<int>>(Value{3}), 3);
  EXPECT_TRUE(to_value(std::optional<int>{}).is_null());
}

TEST(Convert, FieldsRoundTrip) {
  demo::Shape s{"tri", {{1, 2, "a"}, {3, 4, std::nullopt}}, {{"w", 0.5}}};
  Value v = to_value(s);
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.find("name")->as_string(), "tri");
  EXPECT_EQ(v.find("points")->as_array().size(), 2u);
  EXPECT_EQ(from_value<demo::Shape>(v), s);
}

TEST(Convert, FieldsKeepDefaultsForMissingKeysAndIgnoreUnknownOnes) {
  Value v = Value::object({{"x", 9}, {"extra", "ignored"}});
  demo::Point p = from_value<demo::Point>(v);
  EXPECT_EQ(p.x, 9);
  EXPECT_EQ(p.y, 0);
  EXPECT_EQ(p.label, std::nullopt);
}

TEST(Convert, FieldErrorsNameTheField) {
  Value v = Value::object({{"x", "nope"}});
  try {
    (void)from_value<demo::Point>(v);
    FAIL() << "expected ConversionError";
  } catch (const ConversionError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(from_value<demo::Point>(Value{3}), ConversionError);
}

// ---- the action adapter -------------------------------------------------------------------------

struct FakeApi;

TEST(ActionArgs, ConvertsPositionalArgumentsAndReportsMismatches) {
  using Types = ActorTypes<>;
  using Ctx = Context<Types>;
  auto add = [](Ctx&, std::int64_t a, std::optional<std::int64_t> b) { return a + b.value_or(100); };
  using Params = detail::DropFirst<detail::HandlerSignature<decltype(add), Ctx>::Args>::type;
  static_assert(std::is_same_v<Params, std::tuple<std::int64_t, std::optional<std::int64_t>>>);

  auto ok = detail::convert_all_args<Params>(Array{Value{1}, Value{2}}, "add");
  EXPECT_EQ(std::get<0>(ok), 1);
  EXPECT_EQ(std::get<1>(ok), 2);
  auto missing_optional = detail::convert_all_args<Params>(Array{Value{1}}, "add");
  EXPECT_EQ(std::get<1>(missing_optional), std::nullopt);

  try {
    (void)detail::convert_all_args<Params>(Array{Value{"x"}}, "add");
    FAIL() << "expected ActorError";
  } catch (const ActorError& e) {
    EXPECT_EQ(e.error().group, "actor");
    EXPECT_EQ(e.error().code, "invalid_request");
    EXPECT_TRUE(e.error().is_public);
    EXPECT_NE(e.error().message.find("argument 0"), std::string::npos) << e.error().message;
  }
  EXPECT_THROW((void)detail::convert_all_args<Params>(Array{}, "add"), ActorError);
}

TEST(ActionArgs, GenericLambdaSignaturesAreIntrospected) {
  using Ctx = Context<ActorTypes<>>;
  auto f = [](auto&, const std::string& s, std::vector<int> v) { return s.size() + v.size(); };
  using Params = detail::DropFirst<detail::HandlerSignature<decltype(f), Ctx>::Args>::type;
  static_assert(std::is_same_v<Params, std::tuple<std::string, std::vector<int>>>);
  auto rest = [](auto&, RestArgs a) { return a.values; };
  using RestParams = detail::DropFirst<detail::HandlerSignature<decltype(rest), Ctx>::Args>::type;
  auto all = detail::convert_all_args<RestParams>(Array{Value{1}, Value{"a"}}, "rest");
  EXPECT_EQ(std::get<0>(all).values.size(), 2u);
}

}  // namespace
}  // namespace rivetkit
