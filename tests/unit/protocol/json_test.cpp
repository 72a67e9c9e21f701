// JSON parse/stringify: JSON.parse / JSON.stringify semantics and hostile input.

#include "protocol/json/json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace rivetkit::protocol {
namespace {

Value parse_ok(std::string_view text) {
  auto v = json_parse(text);
  EXPECT_TRUE(v.has_value()) << text << ": " << (v ? "" : v.error().message);
  return v ? *v : Value();
}

void expect_parse_error(std::string_view text) {
  auto v = json_parse(text);
  ASSERT_FALSE(v.has_value()) << "accepted: " << text;
  EXPECT_EQ(v.error().group, "actor");
  EXPECT_EQ(v.error().code, "invalid_request");
  EXPECT_FALSE(v.error().message.empty());
}

TEST(JsonParse, Scalars) {
  EXPECT_EQ(parse_ok("null"), Value(nullptr));
  EXPECT_EQ(parse_ok("true"), Value(true));
  EXPECT_EQ(parse_ok(" false "), Value(false));
  EXPECT_EQ(parse_ok("\"hi\""), Value("hi"));
  EXPECT_EQ(parse_ok("0"), Value(0));
  EXPECT_EQ(parse_ok("-12"), Value(-12));
  EXPECT_EQ(parse_ok("9223372036854775807"), Value(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(parse_ok("-9223372036854775808"), Value(std::numeric_limits<std::int64_t>::min()));
}

TEST(JsonParse, NumbersFollowJsSemantics) {
  // Integers beyond int64 and anything with a fraction or exponent are doubles.
  EXPECT_EQ(parse_ok("9223372036854775808"), Value(9223372036854775808.0));
  EXPECT_EQ(parse_ok("1.5"), Value(1.5));
  EXPECT_EQ(parse_ok("1.0"), Value(1.0));
  EXPECT_EQ(parse_ok("1e3"), Value(1000.0));
  EXPECT_EQ(parse_ok("-2.5E-3"), Value(-0.0025));
  const Value neg_zero = parse_ok("-0");
  ASSERT_TRUE(neg_zero.is_double());
  EXPECT_TRUE(std::signbit(neg_zero.as_double()));
  EXPECT_EQ(parse_ok("1e400"), Value(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(parse_ok("-1e400"), Value(-std::numeric_limits<double>::infinity()));
  EXPECT_EQ(parse_ok("1e-400"), Value(0.0));
  EXPECT_EQ(parse_ok("0.0000001e-400"), Value(0.0));
  EXPECT_EQ(parse_ok("1000000000000000000000e290"), Value(std::numeric_limits<double>::infinity()));
}

TEST(JsonParse, StringsAndEscapes) {
  EXPECT_EQ(parse_ok(R"("a\"b\\c\/d\b\f\n\r\t")"), Value("a\"b\\c/d\b\f\n\r\t"));
  EXPECT_EQ(parse_ok(R"("\u0041\u00e9\u20AC")"), Value("A\xC3\xA9\xE2\x82\xAC"));
  EXPECT_EQ(parse_ok(R"("\ud83d\ude00")"), Value("\xF0\x9F\x98\x80"));
  EXPECT_EQ(parse_ok("\"\xC3\xA9\""), Value("\xC3\xA9"));
  EXPECT_EQ(parse_ok(R"("\u0000")"), Value(std::string(1, '\0')));
}

TEST(JsonParse, ContainersKeepOrderAndLastDuplicate) {
  const Value v = parse_ok(R"({"b":1,"a":[1,"x",null,{}],"b":2})");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.as_object().size(), 2u);
  EXPECT_EQ(v.as_object()[0].key, "b");
  EXPECT_EQ(v.as_object()[0].value, Value(2));
  EXPECT_EQ(v.as_object()[1].key, "a");
  EXPECT_EQ(v.as_object()[1].value, Value::array({1, "x", nullptr, Value(Object{})}));
}

TEST(JsonParse, DuplicateKeysInLargeObjectsStayLinear) {
  std::string text = "{";
  for (int i = 0; i < 1000; ++i) {
    text += "\"k" + std::to_string(i % 100) + "\":" + std::to_string(i) + ",";
  }
  text += "\"k0\":-1}";
  const Value v = parse_ok(text);
  ASSERT_EQ(v.as_object().size(), 100u);
  EXPECT_EQ(*v.find("k0"), Value(-1));
  EXPECT_EQ(*v.find("k99"), Value(999));
  EXPECT_EQ(v.as_object()[5].key, "k5");
}

TEST(JsonParse, RejectsMalformedInput) {
  for (std::string_view bad : {"",
                               " ",
                               "nul",
                               "tru",
                               "[1,]",
                               "{\"a\":1,}",
                               "[1 2]",
                               "{\"a\" 1}",
                               "{a:1}",
                               "01",
                               "1.",
                               ".5",
                               "1e",
                               "-",
                               "+1",
                               "\"abc",
                               "\"\\x\"",
                               "\"\\u12\"",
                               "\"\\ud800\"",
                               "\"\\udc00\"",
                               "\"\\ud800\\u0041\"",
                               "[1]x",
                               "1 2",
                               "// c\n1",
                               "NaN",
                               "Infinity",
                               "'a'",
                               "\xEF\xBB\xBF{}"}) {
    expect_parse_error(bad);
  }
  expect_parse_error(std::string("\"a\x01\""));     // raw control character
  expect_parse_error(std::string("\"\xC3\x28\""));  // invalid UTF-8
  expect_parse_error(std::string("\"\xED\xA0\x80\""));
}

TEST(JsonParse, BoundsNestingDepth) {
  DecodeLimits limits;
  limits.max_depth = 4;
  EXPECT_TRUE(json_parse("[[[[1]]]]", limits).has_value());
  EXPECT_FALSE(json_parse("[[[[[1]]]]]", limits).has_value());
  EXPECT_FALSE(json_parse("{\"a\":{\"a\":{\"a\":{\"a\":{}}}}}", limits).has_value());
  // The default limit stops a depth bomb without exhausting the stack.
  const std::string bomb(100000, '[');
  EXPECT_FALSE(json_parse(bomb).has_value());
}

TEST(JsonParse, BoundsItemCount) {
  DecodeLimits limits;
  limits.max_items = 3;
  EXPECT_TRUE(json_parse("[1,2,3]", limits).has_value());
  EXPECT_FALSE(json_parse("[1,2,3,4]", limits).has_value());
  EXPECT_FALSE(json_parse(R"({"a":1,"b":2,"c":3,"d":4})", limits).has_value());
}

TEST(JsonParse, ErrorsNameTheOffset) {
  auto v = json_parse("[1,}");
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message.find("offset 3"), std::string::npos) << v.error().message;
}

TEST(JsonStringify, FollowsJsonStringify) {
  EXPECT_EQ(json_stringify(Value(nullptr)), "null");
  EXPECT_EQ(json_stringify(Value(true)), "true");
  EXPECT_EQ(json_stringify(Value(-42)), "-42");
  EXPECT_EQ(json_stringify(Value(1.5)), "1.5");
  EXPECT_EQ(json_stringify(Value(4294967296.0)), "4294967296");
  EXPECT_EQ(json_stringify(Value(1e21)), "1e+21");
  EXPECT_EQ(json_stringify(Value(1e-7)), "1e-7");
  EXPECT_EQ(json_stringify(Value(std::numeric_limits<double>::quiet_NaN())), "null");
  EXPECT_EQ(json_stringify(Value(std::numeric_limits<double>::infinity())), "null");
  EXPECT_EQ(json_stringify(Value(Undefined{})), "null");
  EXPECT_EQ(json_stringify(Value::array({1, Undefined{}, "a"})), "[1,null,\"a\"]");
  EXPECT_EQ(json_stringify(Value::object({{"a", Undefined{}}, {"b", 2}, {"c", Undefined{}}})),
            "{\"b\":2}");
  EXPECT_EQ(json_stringify(Value(Object{})), "{}");
  EXPECT_EQ(json_stringify(Value(Array{})), "[]");
  EXPECT_EQ(json_stringify(Value(*BigInt::parse("123456789012345678901234567890"))),
            "123456789012345678901234567890");
  EXPECT_EQ(json_stringify(Value(Bytes{9, 8})), "[\"$Uint8Array\",\"CQg=\"]");
}

TEST(JsonStringify, EscapesLikeJavaScript) {
  // The same string JSON.stringify produced in node: '"', '\\' and C0 controls are escaped,
  // '/', U+2028 and non-ASCII are not.
  const Value s("a\"b\\c\n\x01\x1f/\xE2\x80\xA8\xC3\xA9\xF0\x9F\x98\x80\b\f\r\t");
  EXPECT_EQ(json_stringify(s),
            "\"a\\\"b\\\\c\\n\\u0001\\u001f/\xE2\x80\xA8\xC3\xA9\xF0\x9F\x98\x80\\b\\f\\r\\t\"");
  EXPECT_EQ(json_stringify(Value::object({{"k\"", 1}})), "{\"k\\\"\":1}");
}

TEST(JsonStringify, ReplacesInvalidUtf8) {
  EXPECT_EQ(json_stringify(Value(std::string("a\xFF"
                                             "b"))),
            "\"a\xEF\xBF\xBD"
            "b\"");
}

TEST(Json, RoundTripsThroughText) {
  const std::string text =
      R"({"body":{"tag":"ActionRequest","val":{"id":["$BigInt","0"],"name":"increment","args":[3,1.5,-7,"x",{"k":[true,false,null]}]}}})";
  EXPECT_EQ(json_stringify(parse_ok(text)), text);
}

}  // namespace
}  // namespace rivetkit::protocol
