// is_engine_id against ids the real engine handed out (../shared/vectors) and strings it refuses.
#include "protocol/envoy/engine_id.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rivetkit::protocol::envoy {
namespace {

TEST(EngineIdTest, IdsTheEngineIssuedAreAccepted) {
  for (const char* id : {"18ybkor5yfx802i9cnp7vlf8wvcl00", "1kn7gowj608eh5z00hsg8hhrshal00",
                         "5rryjl5poymlxxlfmr7cy47sjobl00", "dh1i051knz6vfwu8fp1l2ouxnkcl00",
                         "57kf201r05t9nf1qjpgkabort8dl00", "tx01t8p87phht2teyhgt0jnod6cl00"}) {
    EXPECT_TRUE(is_engine_id(id)) << id;
  }
}

TEST(EngineIdTest, OtherStringsAreRefused) {
  EXPECT_FALSE(is_engine_id(""));
  EXPECT_FALSE(is_engine_id("0123456789abcdefghijklmnopqrst")) << "version 4";
  EXPECT_FALSE(is_engine_id("18ybkor5yfx802i9cnp7vlf8wvcl0")) << "29 characters";
  EXPECT_FALSE(is_engine_id("18ybkor5yfx802i9cnp7vlf8wvcl000")) << "31 characters";
  EXPECT_FALSE(is_engine_id("18YBKOR5YFX802I9CNP7VLF8WVCL00")) << "upper case";
  EXPECT_FALSE(is_engine_id("18ybkor5yfx802i9cnp7vlf8wv-l00")) << "not base36";
  EXPECT_FALSE(is_engine_id(std::string("18ybkor5yfx802i9cnp7vlf8wv\0l00", 30))) << "NUL";
  // Version 1 in the low digits, but the number needs more than 19 bytes.
  EXPECT_FALSE(is_engine_id("18ybzzzzzzzzzzzzzzzzzzzzzzzzzz"));
  // A local-mode id (16 hex bytes) is not an engine id.
  EXPECT_FALSE(is_engine_id("3f2a9c1b0e7d4a6f8b5c2d1e0f9a8b7c"));
}

}  // namespace
}  // namespace rivetkit::protocol::envoy
