// UTF-8 validation and JavaScript number formatting.

#include "protocol/text/js_number.hpp"
#include "protocol/text/utf8.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace rivetkit::protocol::text {
namespace {

std::string js(double d) {
  std::string out;
  append_js_number(d, out);
  return out;
}

TEST(JsNumber, MatchesNumberToStringOfNode) {
  // Expected strings were produced by node's String(x) / JSON.stringify.
  EXPECT_EQ(js(0), "0");
  EXPECT_EQ(js(-0.0), "0");
  EXPECT_EQ(js(1), "1");
  EXPECT_EQ(js(-1), "-1");
  EXPECT_EQ(js(1.5), "1.5");
  EXPECT_EQ(js(100), "100");
  EXPECT_EQ(js(0.1), "0.1");
  EXPECT_EQ(js(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(js(123.456), "123.456");
  EXPECT_EQ(js(4294967296.0), "4294967296");
  EXPECT_EQ(js(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(js(1e20), "100000000000000000000");
  EXPECT_EQ(js(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(js(1e21), "1e+21");
  EXPECT_EQ(js(1.5e300), "1.5e+300");
  EXPECT_EQ(js(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(js(0.000001), "0.000001");
  EXPECT_EQ(js(1e-7), "1e-7");
  EXPECT_EQ(js(-1e-7), "-1e-7");
  EXPECT_EQ(js(1.23e-18), "1.23e-18");
  EXPECT_EQ(js(5e-324), "5e-324");
  EXPECT_EQ(js(0.00001234), "0.00001234");
  EXPECT_EQ(js(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(js(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(js(-std::numeric_limits<double>::infinity()), "-Infinity");
}

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9"));          // é
  EXPECT_TRUE(is_valid_utf8("\xE2\x80\xA8"));      // U+2028
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x98\x80"));  // U+1F600
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF
  EXPECT_TRUE(is_valid_utf8(std::string("a\0b", 3)));
}

TEST(Utf8, RejectsMalformedText) {
  EXPECT_FALSE(is_valid_utf8("\x80"));              // lone continuation
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate D800
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xF5\x80\x80\x80"));
  EXPECT_FALSE(is_valid_utf8("\xC3"));  // truncated
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));
  EXPECT_FALSE(is_valid_utf8("ok\xFF"));
}

TEST(Utf8, AppendsEveryLength) {
  std::string out;
  append_utf8(0x24, out);
  append_utf8(0xE9, out);
  append_utf8(0x20AC, out);
  append_utf8(0x1F600, out);
  EXPECT_EQ(out, "$\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace rivetkit::protocol::text
