#include <gtest/gtest.h>
#include "protocol/json/json.hpp"
TEST(Smoke, Parse) { EXPECT_TRUE(rivetkit::protocol::json_parse("[1]").has_value()); }
