// CBOR codec against the cbor-x encodings of client-protocol.md §7.2 (hex values below were
// produced by the cbor-x that rivetkit 2.3.19 ships, via node) plus hostile input.

#include "protocol/cbor/cbor.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace rivetkit::protocol {
namespace {

using test::from_hex;
using test::to_hex;

std::string enc(const Value& v) {
  return to_hex(cbor_encode(v));
}

Value dec_ok(std::string_view hex) {
  auto v = cbor_decode(from_hex(hex));
  EXPECT_TRUE(v.has_value()) << hex << ": " << (v ? "" : v.error().message);
  return v ? *v : Value();
}

void expect_dec_error(std::string_view hex, const DecodeLimits& limits = {}) {
  auto v = cbor_decode(from_hex(hex), limits);
  ASSERT_FALSE(v.has_value()) << "accepted " << hex << " as " << to_debug_string(*v);
  EXPECT_EQ(v.error().group, "actor");
  EXPECT_EQ(v.error().code, "invalid_request");
}

Value big(std::string_view decimal) {
  return Value(*BigInt::parse(decimal));
}

TEST(CborEncode, IntegersUseCborXForms) {
  EXPECT_EQ(enc(Value(0)), "00");
  EXPECT_EQ(enc(Value(1)), "01");
  EXPECT_EQ(enc(Value(23)), "17");
  EXPECT_EQ(enc(Value(24)), "1818");
  EXPECT_EQ(enc(Value(255)), "18ff");
  EXPECT_EQ(enc(Value(256)), "190100");
  EXPECT_EQ(enc(Value(65536)), "1a00010000");
  EXPECT_EQ(enc(Value(4294967295LL)), "1affffffff");
  EXPECT_EQ(enc(Value(-1)), "20");
  EXPECT_EQ(enc(Value(-24)), "37");
  EXPECT_EQ(enc(Value(-25)), "3818");
  EXPECT_EQ(enc(Value(-2147483649LL)), "3a80000000");
  EXPECT_EQ(enc(Value(-4294967296LL)), "3affffffff");
  // Whole numbers beyond 32 bits: float64 while JS can hold them exactly ...
  EXPECT_EQ(enc(Value(4294967296LL)), "fb41f0000000000000");
  EXPECT_EQ(enc(Value(-4294967297LL)), "fbc1f0000000100000");
  EXPECT_EQ(enc(Value(9007199254740992LL)), "fb4340000000000000");
  EXPECT_EQ(enc(Value(-9007199254740992LL)), "fbc340000000000000");
  // ... and the 8-byte integer form (a JS bigint) beyond that.
  EXPECT_EQ(enc(Value(9007199254740993LL)), "1b0020000000000001");
  EXPECT_EQ(enc(Value(-9007199254740993LL)), "3b0020000000000000");
  EXPECT_EQ(enc(Value(std::numeric_limits<std::int64_t>::min())), "3b7fffffffffffffff");
}

TEST(CborEncode, DoublesUseCborXForms) {
  EXPECT_EQ(enc(Value(1.5)), "fb3ff8000000000000");
  EXPECT_EQ(enc(Value(3.0)), "03");
  EXPECT_EQ(enc(Value(-3.0)), "22");
  EXPECT_EQ(enc(Value(-0.0)), "00");
  EXPECT_EQ(enc(Value(4294967295.0)), "1affffffff");
  EXPECT_EQ(enc(Value(-4294967296.0)), "3affffffff");
  EXPECT_EQ(enc(Value(4294967296.0)), "fb41f0000000000000");
  EXPECT_EQ(enc(Value(4294967296.5)), "fb41f0000000080000");
  EXPECT_EQ(enc(Value(1e21)), "fb444b1ae4d6e2ef50");
  EXPECT_EQ(enc(Value(1e-7)), "fb3e7ad7f29abcaf48");
  EXPECT_EQ(enc(Value(0.1)), "fb3fb999999999999a");
  EXPECT_EQ(enc(Value(std::numeric_limits<double>::quiet_NaN())), "fb7ff8000000000000");
  EXPECT_EQ(enc(Value(std::numeric_limits<double>::infinity())), "fb7ff0000000000000");
}

TEST(CborEncode, BigIntsAlwaysUseTheEightByteHead) {
  EXPECT_EQ(enc(big("0")), "1b0000000000000000");
  EXPECT_EQ(enc(big("1")), "1b0000000000000001");
  EXPECT_EQ(enc(big("-1")), "3b0000000000000000");
  EXPECT_EQ(enc(big("9223372036854775807")), "1b7fffffffffffffff");
  EXPECT_EQ(enc(big("9223372036854775808")), "1b8000000000000000");
  EXPECT_EQ(enc(big("18446744073709551615")), "1bffffffffffffffff");
  EXPECT_EQ(enc(big("-9223372036854775808")), "3b7fffffffffffffff");
  EXPECT_EQ(enc(big("-9223372036854775809")), "3b8000000000000000");
  EXPECT_EQ(enc(big("-18446744073709551615")), "3bfffffffffffffffe");
  EXPECT_EQ(enc(big("-18446744073709551616")), "3bffffffffffffffff");
  EXPECT_EQ(enc(big("18446744073709551616")), "c249010000000000000000");
  EXPECT_EQ(enc(big("-18446744073709551617")), "c349010000000000000000");
}

TEST(CborEncode, OtherKinds) {
  EXPECT_EQ(enc(Value(Undefined{})), "f7");
  EXPECT_EQ(enc(Value(nullptr)), "f6");
  EXPECT_EQ(enc(Value(true)), "f5");
  EXPECT_EQ(enc(Value(false)), "f4");
  EXPECT_EQ(enc(Value("")), "60");
  EXPECT_EQ(enc(Value("body")), "64626f6479");
  std::string x24_hex = "7818";
  for (int i = 0; i < 24; ++i) {
    x24_hex += "78";
  }
  EXPECT_EQ(enc(Value(std::string(24, 'x'))), x24_hex);
  EXPECT_EQ(enc(Value(Bytes{1, 2})), "420102");
  EXPECT_EQ(enc(Value::array({1, 2})), "820102");
  EXPECT_EQ(enc(Value(Array{})), "80");
  EXPECT_EQ(enc(Value(Object{})), "a0");
  EXPECT_EQ(enc(Value::object({{"a", 1}})), "a1616101");
  const std::string s256(256, 'y');
  EXPECT_EQ(enc(Value(s256)).substr(0, 6), "790100");
}

TEST(CborDecode, ReadsWhatCborXWrites) {
  EXPECT_EQ(dec_ok("b90001616101"), Value::object({{"a", 1}}));  // b9 0001 map header
  EXPECT_EQ(dec_ok("b90000"), Value(Object{}));
  EXPECT_EQ(dec_ok("820102"), Value::array({1, 2}));
  EXPECT_EQ(dec_ok("fb41f0000000000000"), Value(4294967296.0));
  EXPECT_EQ(dec_ok("fb3ff8000000000000"), Value(1.5));
  EXPECT_EQ(dec_ok("f7"), Value(Undefined{}));
  EXPECT_EQ(dec_ok("f6"), Value(nullptr));
  EXPECT_EQ(dec_ok("f5"), Value(true));
  EXPECT_EQ(dec_ok("d840420102"), Value(Bytes{1, 2}));               // Uint8Array
  EXPECT_EQ(dec_ok("d8414401000200"), Value(Bytes{1, 0, 2, 0}));     // Uint16Array payload
  EXPECT_EQ(dec_ok("d901028101"), Value::array({1}));                // Set
  EXPECT_EQ(dec_ok("d90103a1016161"), Value::object({{"1", "a"}}));  // Map
  EXPECT_EQ(dec_ok("c11a00000000"), Value(0));                       // Date
  EXPECT_EQ(dec_ok("7818787878787878787878787878787878787878787878787878"),
            Value(std::string(24, 'x')));
}

TEST(CborDecode, EightByteIntegersAreBigInts) {
  // cbor-x yields a JS bigint for exactly these forms, whatever the value.
  EXPECT_EQ(dec_ok("1b0000000000000000"), big("0"));
  EXPECT_EQ(dec_ok("1b0000000000000001"), big("1"));
  EXPECT_EQ(dec_ok("1bffffffffffffffff"), big("18446744073709551615"));
  EXPECT_EQ(dec_ok("3b0000000000000000"), big("-1"));
  EXPECT_EQ(dec_ok("3bffffffffffffffff"), big("-18446744073709551616"));
  EXPECT_EQ(dec_ok("c348ffffffffffffffff"), big("-18446744073709551616"));
  EXPECT_EQ(dec_ok("c249010000000000000000"), big("18446744073709551616"));
  EXPECT_EQ(dec_ok("c349010000000000000000"), big("-18446744073709551617"));
  EXPECT_EQ(dec_ok("c2420100"), big("256"));
  EXPECT_EQ(dec_ok("c240"), big("0"));
  // Shorter forms are plain numbers.
  EXPECT_EQ(dec_ok("1a00000001"), Value(1));
  EXPECT_EQ(dec_ok("1800"), Value(0));  // non-minimal, accepted
  EXPECT_EQ(dec_ok("3affffffff"), Value(-4294967296LL));
}

TEST(CborDecode, Floats) {
  EXPECT_EQ(dec_ok("f94480"), Value(4.5));  // what ciborium writes
  EXPECT_EQ(dec_ok("f93c00"), Value(1.0));
  EXPECT_EQ(dec_ok("f9c000"), Value(-2.0));
  EXPECT_EQ(dec_ok("f90001"), Value(std::ldexp(1.0, -24)));
  EXPECT_EQ(dec_ok("f97c00"), Value(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(dec_ok("f9fc00"), Value(-std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(std::isnan(dec_ok("f97e00").as_double()));
  EXPECT_EQ(dec_ok("fa3fc00000"), Value(1.5));
  EXPECT_TRUE(dec_ok("f98000").is_double());
}

TEST(CborDecode, IndefiniteLengths) {
  EXPECT_EQ(dec_ok("9f0102ff"), Value::array({1, 2}));
  EXPECT_EQ(dec_ok("9fff"), Value(Array{}));
  EXPECT_EQ(dec_ok("bf616101ff"), Value::object({{"a", 1}}));
  EXPECT_EQ(dec_ok("5f41014102ff"), Value(Bytes{1, 2}));
  EXPECT_EQ(dec_ok("7f61616162ff"), Value("ab"));
  EXPECT_EQ(dec_ok("9f9f01ffff"), Value::array({Value::array({1})}));
}

TEST(CborDecode, MapKeysBecomePropertyNames) {
  EXPECT_EQ(dec_ok("a1016161"), Value::object({{"1", "a"}}));
  EXPECT_EQ(dec_ok("a1206161"), Value::object({{"-1", "a"}}));
  EXPECT_EQ(dec_ok("a1f56161"), Value::object({{"true", "a"}}));
  EXPECT_EQ(dec_ok("a1f66161"), Value::object({{"null", "a"}}));
  EXPECT_EQ(dec_ok("a1fb3ff80000000000006161"), Value::object({{"1.5", "a"}}));
  EXPECT_EQ(dec_ok("a21b0000000000000001010102"), Value::object({{"1", 2}}));  // last wins
  expect_dec_error("a1410101");                                                // byte-string key
  expect_dec_error("a18201026161");                                            // array key
  expect_dec_error("a1a06161");                                                // map key
}

TEST(CborDecode, RejectsMalformedInput) {
  expect_dec_error("");
  expect_dec_error("1c");            // reserved additional information
  expect_dec_error("1f");            // indefinite unsigned
  expect_dec_error("df");            // indefinite tag
  expect_dec_error("ff");            // stray break
  expect_dec_error("f800");          // one-byte simple value
  expect_dec_error("e0");            // simple value 0
  expect_dec_error("0101");          // trailing data
  expect_dec_error("62c328");        // invalid UTF-8
  expect_dec_error("63eda080");      // surrogate in UTF-8
  expect_dec_error("5f6161ff");      // text chunk in a byte string
  expect_dec_error("5f5f4101ffff");  // nested indefinite chunk
  expect_dec_error("9f01");          // unterminated indefinite array
  expect_dec_error("bf6161");        // unterminated indefinite map
  expect_dec_error("bf616101ff01");  // trailing after indefinite map
  expect_dec_error("c201");          // bignum without bytes
  expect_dec_error("d84001");        // typed array without bytes
  expect_dec_error("d9010201");      // set without array
  expect_dec_error("d9010301");      // map tag without map
  expect_dec_error("a2616101");      // map missing a value
}

TEST(CborDecode, RejectsHugeAnnouncedLengthsWithoutAllocating) {
  expect_dec_error("5bffffffffffffffff");
  expect_dec_error("7bffffffffffffffff");
  expect_dec_error("9bffffffffffffffff");
  expect_dec_error("bbffffffffffffffff");
  expect_dec_error("5a7fffffff00");
  expect_dec_error("9a7fffffff00");
  expect_dec_error("9903e8" + std::string(2 * 999, '0'));   // 1000 items announced, 999 present
  expect_dec_error("b903e8" + std::string(2 * 1000, '0'));  // 1000 entries need 2000 bytes
}

TEST(CborDecode, BoundsNestingAndItems) {
  DecodeLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(cbor_decode(from_hex("81818101"), limits).has_value());
  expect_dec_error("8181818101", limits);
  expect_dec_error("c1c1c1c101", limits);  // tags count as nesting
  EXPECT_TRUE(cbor_decode(from_hex("a16161a16161a1616101"), limits).has_value());
  expect_dec_error("a16161a16161a16161a1616101", limits);
  std::string bomb(200000, '\x81');
  bomb += '\x01';
  EXPECT_FALSE(cbor_decode(bomb).has_value());
  std::string tag_bomb;
  for (int i = 0; i < 100000; ++i) {
    tag_bomb += '\xc1';
  }
  tag_bomb += '\x01';
  EXPECT_FALSE(cbor_decode(tag_bomb).has_value());

  DecodeLimits items;
  items.max_items = 2;
  EXPECT_TRUE(cbor_decode(from_hex("820102"), items).has_value());
  expect_dec_error("83010203", items);
  expect_dec_error("9f010203ff", items);
  expect_dec_error("bf616101616201616301ff", items);
}

TEST(CborDecode, RejectsOversizedBignums) {
  expect_dec_error("c2590401" + std::string(1025 * 2, 'f'));  // 1025-byte magnitude
  EXPECT_TRUE(cbor_decode(from_hex("c2590400" + std::string(1024 * 2, 'f'))).has_value());
}

TEST(CborDecode, EveryTruncationFails) {
  const std::string full = from_hex(
      "b9000164626f6479b90002637461676d416374696f6e526571756573746376616cb900036269641b000000000000"
      "00"
      "00646e616d6569696e6372656d656e7464617267738103");
  ASSERT_TRUE(cbor_decode(full).has_value());
  for (std::size_t n = 0; n < full.size(); ++n) {
    EXPECT_FALSE(cbor_decode(std::string_view(full).substr(0, n)).has_value()) << n;
  }
}

TEST(Cbor, RoundTripsValues) {
  const Value v = Value::object({{"n", -5},
                                 {"d", 2.25},
                                 {"s", "text"},
                                 {"b", Bytes{0, 255}},
                                 {"a", Value::array({nullptr, Undefined{}, true})},
                                 {"big", big("-99999999999999999999999")},
                                 {"o", Value::object({{"x", Value(Array{})}})}});
  auto back = cbor_decode(cbor_encode(v));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, v);
}

}  // namespace
}  // namespace rivetkit::protocol
