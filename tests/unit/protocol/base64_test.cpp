#include "protocol/compat.hpp"

#include <gtest/gtest.h>

namespace rivetkit::protocol {
namespace {

std::string b64(std::string_view s) {
  return base64_encode(
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
}

std::string b64url(std::string_view s) {
  return base64url_encode(
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
}

std::string as_string(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

TEST(Base64, EncodesRfc4648Vectors) {
  EXPECT_EQ(b64(""), "");
  EXPECT_EQ(b64("f"), "Zg==");
  EXPECT_EQ(b64("fo"), "Zm8=");
  EXPECT_EQ(b64("foo"), "Zm9v");
  EXPECT_EQ(b64("foob"), "Zm9vYg==");
  EXPECT_EQ(b64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(b64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(b64("\x09\x08"), "CQg=");  // the Uint8Array([9, 8]) vector of client-protocol.md §7.1
  EXPECT_EQ(b64("\xFB\xFF"), "+/8=");
}

TEST(Base64, DecodesWithAndWithoutPadding) {
  EXPECT_EQ(as_string(*base64_decode("Zm9vYmFy")), "foobar");
  EXPECT_EQ(as_string(*base64_decode("Zm9vYg==")), "foob");
  EXPECT_EQ(as_string(*base64_decode("Zm9vYg")), "foob");
  EXPECT_EQ(as_string(*base64_decode("CQg=")), "\x09\x08");
  EXPECT_EQ(as_string(*base64_decode("")), "");
  EXPECT_EQ(as_string(*base64_decode("+/8=")), "\xFB\xFF");
}

TEST(Base64, RejectsInvalidInput) {
  EXPECT_FALSE(base64_decode("Zm9v!"));
  EXPECT_FALSE(base64_decode("Z"));        // 6 bits cannot form a byte
  EXPECT_FALSE(base64_decode("Zm9vY"));    // ditto after a full group
  EXPECT_FALSE(base64_decode("Zg=a"));     // padding in the middle
  EXPECT_FALSE(base64_decode("Zg="));      // incomplete padding
  EXPECT_FALSE(base64_decode("Zm9v==="));  // too much padding
  EXPECT_FALSE(base64_decode("-_8="));     // url alphabet in standard base64
}

TEST(Base64Url, EncodesWithoutPaddingAndDecodesBothForms) {
  EXPECT_EQ(b64url("\xFB\xFF"), "-_8");
  EXPECT_EQ(b64url("foob"), "Zm9vYg");
  EXPECT_EQ(as_string(*base64url_decode("-_8")), "\xFB\xFF");
  EXPECT_EQ(as_string(*base64url_decode("-_8=")), "\xFB\xFF");
  EXPECT_FALSE(base64url_decode("+/8="));
}

}  // namespace
}  // namespace rivetkit::protocol
