#include "core/keys.hpp"

#include <gtest/gtest.h>

namespace rivetkit::core {
namespace {

using Key = std::vector<std::string>;

TEST(Keys, SerializesLikeTheEngine) {
  // client-protocol.md §4.4 examples.
  EXPECT_EQ(serialize_key({}), "/");
  EXPECT_EQ(serialize_key({"a", "b"}), "a/b");
  EXPECT_EQ(serialize_key({"a/b"}), "a\\/b");
  EXPECT_EQ(serialize_key({""}), "\\0");
  EXPECT_EQ(serialize_key({"a\\b"}), "a\\\\b");
  EXPECT_EQ(serialize_key({"a,b", "c/d", ""}), "a,b/c\\/d/\\0");
}

TEST(Keys, ParseInvertsSerialize) {
  for (const Key& k : {Key{}, Key{"a"}, Key{"a", "b"}, Key{""}, Key{"", ""}, Key{"a/b", "\\", "0"},
                       Key{"\\0"}, Key{"a,b", "c/d", ""}, Key{"x", ""}}) {
    auto parsed = parse_key(serialize_key(k));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, k) << serialize_key(k);
  }
}

TEST(Keys, RejectsDanglingEscape) {
  EXPECT_FALSE(parse_key("abc\\").has_value());
}

}  // namespace
}  // namespace rivetkit::core
