// BARE primitives: exact encodings (https://baremessages.org) and a reader that fails cleanly.

#include "protocol/bare/bare.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace rivetkit::protocol::bare {
namespace {

using test::from_hex;
using test::to_hex;

template <class F>
std::string written(F&& f) {
  std::string out;
  Writer w(out);
  f(w);
  return to_hex(out);
}

TEST(BareWriter, FixedWidthIsLittleEndian) {
  EXPECT_EQ(written([](Writer& w) { w.u8(0xAB); }), "ab");
  EXPECT_EQ(written([](Writer& w) { w.u16(4); }), "0400");
  EXPECT_EQ(written([](Writer& w) { w.u32(0x01020304); }), "04030201");
  EXPECT_EQ(written([](Writer& w) { w.u64(5000); }), "8813000000000000");
  EXPECT_EQ(written([](Writer& w) { w.i64(-2); }), "feffffffffffffff");
  EXPECT_EQ(written([](Writer& w) { w.f64(1.5); }), "000000000000f83f");
}

TEST(BareWriter, VarintsAndZigzag) {
  EXPECT_EQ(written([](Writer& w) { w.uint(0); }), "00");
  EXPECT_EQ(written([](Writer& w) { w.uint(127); }), "7f");
  EXPECT_EQ(written([](Writer& w) { w.uint(128); }), "8001");
  EXPECT_EQ(written([](Writer& w) { w.uint(300); }), "ac02");
  EXPECT_EQ(written([](Writer& w) { w.uint(std::numeric_limits<std::uint64_t>::max()); }),
            "ffffffffffffffffff01");
  EXPECT_EQ(written([](Writer& w) { w.int_(0); }), "00");
  EXPECT_EQ(written([](Writer& w) { w.int_(-1); }), "01");
  EXPECT_EQ(written([](Writer& w) { w.int_(1); }), "02");
  EXPECT_EQ(written([](Writer& w) { w.int_(-64); }), "7f");
  EXPECT_EQ(written([](Writer& w) { w.int_(64); }), "8001");
  EXPECT_EQ(written([](Writer& w) { w.int_(std::numeric_limits<std::int64_t>::min()); }),
            "ffffffffffffffffff01");
}

TEST(BareWriter, StringsDataAndOptionals) {
  EXPECT_EQ(written([](Writer& w) { w.str("jobs"); }), "046a6f6273");
  EXPECT_EQ(written([](Writer& w) { w.str(""); }), "00");
  const std::uint8_t raw[] = {0x81, 0x05};
  EXPECT_EQ(written([&](Writer& w) { w.data(std::span<const std::uint8_t>(raw)); }), "028105");
  EXPECT_EQ(written([&](Writer& w) { w.fixed(std::span<const std::uint8_t>(raw)); }), "8105");
  EXPECT_EQ(written([](Writer& w) { w.boolean(true); }), "01");
  EXPECT_EQ(written([](Writer& w) {
              w.optional_tag(false);
              w.optional_tag(true);
            }),
            "0001");
}

TEST(BareReader, ReadsBackWhatWasWritten) {
  std::string buf;
  Writer w(buf);
  w.u8(7);
  w.u16(0x0403);
  w.u32(0xDEADBEEF);
  w.u64(std::numeric_limits<std::uint64_t>::max());
  w.i64(-5);
  w.f64(-0.25);
  w.uint(1ull << 63);
  w.int_(-123456789);
  w.boolean(true);
  w.str("h\xC3\xA9");
  w.data(std::string_view("\x00\x01", 2));
  const std::uint8_t fixed[3] = {1, 2, 3};
  w.fixed(fixed);

  Reader r(buf);
  std::uint8_t a = 0;
  std::uint16_t b = 0;
  std::uint32_t c = 0;
  std::uint64_t d = 0;
  std::int64_t e = 0;
  double f = 0;
  std::uint64_t g = 0;
  std::int64_t h = 0;
  bool i = false;
  std::string j;
  std::vector<std::uint8_t> k;
  std::uint8_t l[3] = {};
  ASSERT_TRUE(r.u8(a) && r.u16(b) && r.u32(c) && r.u64(d) && r.i64(e) && r.f64(f) && r.uint(g)
              && r.int_(h) && r.boolean(i) && r.str(j) && r.data(k) && r.fixed(l));
  EXPECT_EQ(a, 7);
  EXPECT_EQ(b, 0x0403);
  EXPECT_EQ(c, 0xDEADBEEFu);
  EXPECT_EQ(d, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(e, -5);
  EXPECT_EQ(f, -0.25);
  EXPECT_EQ(g, 1ull << 63);
  EXPECT_EQ(h, -123456789);
  EXPECT_TRUE(i);
  EXPECT_EQ(j, "h\xC3\xA9");
  EXPECT_EQ(k, (std::vector<std::uint8_t>{0, 1}));
  EXPECT_EQ(l[2], 3);
  EXPECT_TRUE(r.at_end());
  EXPECT_FALSE(r.failed());
}

TEST(BareReader, RejectsOverlongVarints) {
  std::uint64_t v = 0;
  const std::string ok_in = from_hex("ffffffffffffffffff01");
  Reader ok(ok_in);
  EXPECT_TRUE(ok.uint(v));
  EXPECT_EQ(v, std::numeric_limits<std::uint64_t>::max());
  const std::string too_big_in = from_hex("ffffffffffffffffff02");
  Reader too_big(too_big_in);
  EXPECT_FALSE(too_big.uint(v));
  const std::string too_long_in = from_hex("8080808080808080808000");
  Reader too_long(too_long_in);
  EXPECT_FALSE(too_long.uint(v));
  const std::string truncated_in = from_hex("8080");
  Reader truncated(truncated_in);
  EXPECT_FALSE(truncated.uint(v));
  EXPECT_TRUE(truncated.failed());
}

TEST(BareReader, RejectsBadLengthsBooleansAndUtf8) {
  std::string s;
  std::vector<std::uint8_t> bytes;
  const std::string huge_in = from_hex(
      "ffffffffffffffffff01"
      "00");
  Reader huge(huge_in);
  EXPECT_FALSE(huge.data(s));
  const std::string short_data_in = from_hex("0561");
  Reader short_data(short_data_in);
  EXPECT_FALSE(short_data.data(bytes));
  const std::string bad_utf8_in = from_hex("02c328");
  Reader bad_utf8(bad_utf8_in);
  EXPECT_FALSE(bad_utf8.str(s));
  const std::string data_is_not_checked_in = from_hex("02c328");
  Reader data_is_not_checked(data_is_not_checked_in);
  EXPECT_TRUE(data_is_not_checked.data(s));
  bool flag = false;
  const std::string bad_bool_in = from_hex("02");
  Reader bad_bool(bad_bool_in);
  EXPECT_FALSE(bad_bool.boolean(flag));
  const std::string bad_optional_in = from_hex("05");
  Reader bad_optional(bad_optional_in);
  EXPECT_FALSE(bad_optional.optional_tag(flag));
  std::uint8_t out[4] = {};
  const std::string short_fixed_in = from_hex("010203");
  Reader short_fixed(short_fixed_in);
  EXPECT_FALSE(short_fixed.fixed(out));
}

TEST(BareReader, StaysFailedAfterAnError) {
  const std::string r_in = from_hex("01");
  Reader r(r_in);
  std::uint16_t v16 = 0;
  EXPECT_FALSE(r.u16(v16));
  std::uint8_t v8 = 0;
  EXPECT_FALSE(r.u8(v8));  // the byte is there, but the reader has failed
  EXPECT_TRUE(r.failed());
}

TEST(BareReader, EmptyInput) {
  Reader r(std::string_view{});
  std::uint8_t v = 0;
  std::string s;
  EXPECT_TRUE(r.at_end());
  EXPECT_FALSE(r.u8(v));
  Reader r2(std::string_view{});
  EXPECT_FALSE(r2.str(s));
}

}  // namespace
}  // namespace rivetkit::protocol::bare
