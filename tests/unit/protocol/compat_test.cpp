// Compat tagging against rivetkit 2.3.19's own encodeCborCompat / jsonStringifyCompat /
// jsonParseCompat: the expected strings below were produced by running those functions in node.

#include "protocol/compat.hpp"

#include "protocol/cbor/cbor.hpp"
#include "protocol/json/json.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rivetkit::protocol {
namespace {

using test::from_hex;
using test::to_hex;

Value big(std::string_view decimal) {
  return Value(*BigInt::parse(decimal));
}

// encodeCborCompat(v) for values without objects (cbor-x writes objects with b9 heads, we write
// minimal heads, so objects are compared structurally instead).
std::string cbor_compat(const Value& v) {
  return to_hex(cbor_encode(compat_encode(v, CompatMode::kCbor)));
}
// jsonStringifyCompat(v).
std::string json_compat(const Value& v) {
  return json_stringify(compat_encode(v, CompatMode::kJson));
}

Value revive_json(std::string_view text) {
  auto parsed = json_parse(text);
  EXPECT_TRUE(parsed.has_value());
  auto revived = compat_decode(*parsed);
  EXPECT_TRUE(revived.has_value()) << text << ": " << (revived ? "" : revived.error().message);
  return revived ? *revived : Value();
}

TEST(CompatEncode, MatchesRivetkitForBigInt) {
  EXPECT_EQ(cbor_compat(big("1")), "826724426967496e746131");
  EXPECT_EQ(json_compat(big("1")), R"(["$BigInt","1"])");
  EXPECT_EQ(cbor_compat(big("-123456789012345678901234567890")),
            "826724426967496e74781f2d313233343536373839303132333435363738393031323334353637383930");
  EXPECT_EQ(json_compat(big("-123456789012345678901234567890")),
            R"(["$BigInt","-123456789012345678901234567890"])");
}

TEST(CompatEncode, MatchesRivetkitForBytesAndUndefined) {
  EXPECT_EQ(cbor_compat(Value(Bytes{9, 8})), "826b2455696e74384172726179644351673d");
  EXPECT_EQ(json_compat(Value(Bytes{9, 8})), R"(["$Uint8Array","CQg="])");
  EXPECT_EQ(cbor_compat(Value(Bytes{})), "826b2455696e7438417272617960");
  EXPECT_EQ(cbor_compat(Value(Undefined{})), "826a24556e646566696e656400");
  EXPECT_EQ(cbor_compat(Value::array({Undefined{}, nullptr})), "82826a24556e646566696e656400f6");
  // JSON leaves undefined to JSON.stringify: null in arrays, dropped from objects.
  EXPECT_EQ(json_compat(Value::array({Undefined{}, nullptr})), "[null,null]");
}

TEST(CompatEncode, EscapesArraysThatLookTagged) {
  EXPECT_EQ(cbor_compat(Value::array({"$x", 1})), "826324247801");
  EXPECT_EQ(json_compat(Value::array({"$x", 1})), R"(["$$x",1])");
  EXPECT_EQ(cbor_compat(Value::array({"$$x", big("1")})), "826424242478826724426967496e746131");
  EXPECT_EQ(json_compat(Value::array({"$$x", big("1")})), R"(["$$$x",["$BigInt","1"]])");
  // Only two-element arrays are tags.
  EXPECT_EQ(cbor_compat(Value::array({"$x", 1, 2})), "836224780102");
  EXPECT_EQ(json_compat(Value::array({"$x", 1, 2})), R"(["$x",1,2])");
  // Nested, and a user array that spells a real tag.
  const Value nested =
      Value::array({Value::array({big("1"), "a"}), Value::array({"$BigInt", "5"})});
  EXPECT_EQ(cbor_compat(nested), "8282826724426967496e746131616182682424426967496e746135");
  EXPECT_EQ(json_compat(nested), R"([[["$BigInt","1"],"a"],["$$BigInt","5"]])");
  // A bigint in first position is not a string, so no escape.
  EXPECT_EQ(cbor_compat(Value::array({big("1"), 2})), "82826724426967496e74613102");
  EXPECT_EQ(json_compat(Value::array({big("1"), 2})), R"([["$BigInt","1"],2])");
  // A lone "$" string is not an array.
  EXPECT_EQ(cbor_compat(Value("$BigInt")), "6724426967496e74");
}

TEST(CompatEncode, RecursesIntoObjects) {
  const Value obj = Value::object({{"a", big("1")},
                                   {"b", Undefined{}},
                                   {"c", Value::array({"$y", Value::array({Undefined{}})})}});
  EXPECT_EQ(json_compat(obj), R"({"a":["$BigInt","1"],"c":["$$y",[null]]})");
  // rivetkit's bytes: b90003 6161 82..., which differ from ours only in the map head.
  const auto theirs = cbor_decode(from_hex(
      "b900036161826724426967496e7461316162826a24556e646566696e6564006163826324247981826a24556e64"
      "6566696e656400"));
  ASSERT_TRUE(theirs.has_value());
  EXPECT_EQ(compat_encode(obj, CompatMode::kCbor), *theirs);
  EXPECT_EQ(to_hex(cbor_encode(compat_encode(obj, CompatMode::kCbor))).substr(0, 2), "a3");
}

TEST(CompatEncode, LeavesNumbersAndStringsAlone) {
  const std::string expected =
      "86fb3ff8000000000000fb444b1ae4d6e2ef50fb3e7ad7f29abcaf4800fb41f0000000000000fb43400000000000"
      "00";
  EXPECT_EQ(cbor_compat(Value::array({1.5, 1e21, 1e-7, -0.0, 4294967296.0, 9007199254740992.0})),
            expected);
  EXPECT_EQ(json_compat(Value::array({1.5, 1e21, 1e-7, -0.0, 4294967296.0, 9007199254740992.0})),
            "[1.5,1e+21,1e-7,0,4294967296,9007199254740992]");
}

TEST(CompatDecode, RevivesEveryTag) {
  EXPECT_EQ(revive_json(R"(["$BigInt","12345678901234567890123"])"),
            big("12345678901234567890123"));
  EXPECT_EQ(revive_json(R"(["$BigInt",12])"), big("12"));  // BigInt(12)
  EXPECT_EQ(revive_json(R"(["$Uint8Array","CQg="])"), Value(Bytes{9, 8}));
  EXPECT_EQ(revive_json(R"(["$Uint8Array","AQI"])"), Value(Bytes{1, 2}));  // Buffer accepts it
  EXPECT_EQ(revive_json(R"(["$ArrayBuffer","AQI="])"), Value(Bytes{1, 2}));
  EXPECT_EQ(revive_json(R"(["$Undefined",0])"), Value(Undefined{}));
  EXPECT_EQ(revive_json(R"(["$Undefined",null])"), Value(Undefined{}));
  EXPECT_EQ(revive_json(R"(["$Set",[1,["$BigInt","2"]]])"), Value::array({1, big("2")}));
  EXPECT_EQ(revive_json(R"(["$Set",[["$$x",1],"$y"]])"),
            Value::array({Value::array({"$x", 1}), "$y"}));
  EXPECT_EQ(revive_json(R"(["$$Foo",1])"), Value::array({"$Foo", 1}));
  EXPECT_EQ(revive_json(R"(["$$$x",["$BigInt","1"]])"), Value::array({"$$x", big("1")}));
  EXPECT_EQ(revive_json(R"({"a":[["$BigInt","1"],["$Uint8Array","CQg="],null,"s",{"m":1.5}]})"),
            Value::object({{"a", Value::array({big("1"), Bytes{9, 8}, nullptr, "s",
                                               Value::object({{"m", 1.5}})})}}));
  EXPECT_EQ(revive_json(R"(["$x",1,2])"), Value::array({"$x", 1, 2}));
  EXPECT_EQ(revive_json(R"(["x",1])"), Value::array({"x", 1}));
}

TEST(CompatDecode, RejectsUnknownAndMalformedTags) {
  for (std::string_view bad :
       {R"(["$Foo",1])", R"(["$",1])", R"(["$BigInt","1.5"])", R"(["$BigInt",null])",
        R"(["$Uint8Array","!!"])", R"(["$Uint8Array",5])", R"(["$Set",1])", R"([1,["$Nope",2]])",
        R"({"k":["$Nope",2]})"}) {
    auto parsed = json_parse(bad);
    ASSERT_TRUE(parsed.has_value()) << bad;
    auto revived = compat_decode(*parsed);
    ASSERT_FALSE(revived.has_value()) << bad;
    EXPECT_EQ(revived.error().code, "invalid_request");
  }
}

TEST(Compat, RoundTripsInBothModes) {
  const Value v = Value::object({{"big", big("-5")},
                                 {"bytes", Bytes{0, 1, 2, 255}},
                                 {"undef_in_array", Value::array({Undefined{}})},
                                 {"escaped", Value::array({"$a", Value::array({"$$b", Bytes{7}})})},
                                 {"plain", Value::array({1, "two", 3.5, nullptr, true})}});
  auto from_cbor = compat_decode(compat_encode(v, CompatMode::kCbor));
  ASSERT_TRUE(from_cbor.has_value());
  EXPECT_EQ(*from_cbor, v);

  // Through JSON text, undefined inside arrays comes back as null, as in JS.
  auto parsed = json_parse(json_stringify(compat_encode(v, CompatMode::kJson)));
  ASSERT_TRUE(parsed.has_value());
  auto from_json = compat_decode(*parsed);
  ASSERT_TRUE(from_json.has_value());
  Value expected = v;
  expected.set("undef_in_array", Value::array({nullptr}));
  EXPECT_EQ(*from_json, expected);
}

}  // namespace
}  // namespace rivetkit::protocol
