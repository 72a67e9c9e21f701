// How user values are stored: they round-trip through the stored form, and bytes that are not
// that form are an error, never a crash.

#include "core/actor/stored_value.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rivetkit::core {
namespace {

TEST(StoredValueTest, ValuesRoundTrip) {
  Value v{Object{}};
  v.set("count", Value{42});
  v.set("name", Value{"ann"});
  v.set("tags", Value{Array{Value{true}, Value{nullptr}, Value{1.5}}});
  auto back = decode_stored(encode_stored(v));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, v);

  auto undefined = decode_stored(encode_stored(Value{Undefined{}}));
  ASSERT_TRUE(undefined);
  EXPECT_TRUE(undefined->is_undefined());
}

TEST(StoredValueTest, BytesThatAreNotAStoredValueAreAnError) {
  EXPECT_FALSE(decode_stored(std::string("\xff\xff\xff", 3)));
  EXPECT_FALSE(decode_stored(std::string("\x1b\x00", 2)));  // a truncated 8-byte integer
}

}  // namespace
}  // namespace rivetkit::core
