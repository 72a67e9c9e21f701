// Every client-message decoder is total: truncated, corrupted or hostile input yields
// actor.invalid_request, never a crash, a hang or a huge allocation.

#include "protocol/client/messages.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace rivetkit::protocol::client {
namespace {

using test::from_hex;

struct ValidFrame {
  const char* label;
  Encoding encoding;
  std::string bytes;
};

std::vector<ValidFrame> to_server_frames() {
  return {
      {"bare action", Encoding::kBare, from_hex("0400000009696e6372656d656e74028103")},
      {"bare exotic action", Encoding::kBare,
       from_hex("0400000704"
                "6563686f"
                "3c86826724426967496e746131826b2455696e74384172726179644351"
                "673d826a24556e646566696e656400f66173b90001616dfb3ff8000000000000")},
      {"bare subscription", Encoding::kBare, from_hex("040001086e6577436f756e7401")},
      {"cbor action", Encoding::kCbor,
       from_hex("b9000164626f6479b90002637461676d416374696f6e526571756573746376616cb900036269641b"
                "0000000000000000646e616d6569696e6372656d656e7464617267738103")},
      {"cbor subscription", Encoding::kCbor,
       from_hex("b9000164626f6479b900026374616773537562736372697074696f6e526571756573746376616cb9"
                "0002696576656e744e616d65686e6577436f756e7469737562736372696265f5")},
      {"json action", Encoding::kJson,
       R"({"body":{"tag":"ActionRequest","val":{"id":["$BigInt","0"],"name":"increment","args":[3]}}})"},
      {"json subscription", Encoding::kJson,
       R"({"body":{"tag":"SubscriptionRequest","val":{"eventName":"newCount","subscribe":true}}})"},
  };
}

void expect_invalid_request(const Result<ToServer>& r, const std::string& context) {
  ASSERT_FALSE(r.has_value()) << context;
  EXPECT_EQ(r.error().group, "actor") << context;
  EXPECT_EQ(r.error().code, "invalid_request") << context;
  EXPECT_FALSE(r.error().message.empty()) << context;
}

TEST(MalformedToServer, EveryTruncationFails) {
  for (const auto& frame : to_server_frames()) {
    ASSERT_TRUE(decode_to_server(frame.encoding, frame.bytes).has_value()) << frame.label;
    for (std::size_t n = 0; n < frame.bytes.size(); ++n) {
      expect_invalid_request(decode_to_server(frame.encoding, frame.bytes.substr(0, n)),
                             std::string(frame.label) + " truncated to " + std::to_string(n));
    }
  }
}

TEST(MalformedToServer, TrailingBytesFail) {
  for (const auto& frame : to_server_frames()) {
    expect_invalid_request(decode_to_server(frame.encoding, frame.bytes + '\0'), frame.label);
  }
}

TEST(MalformedToServer, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(12345);
  for (const auto& frame : to_server_frames()) {
    for (int round = 0; round < 2000; ++round) {
      std::string bytes = frame.bytes;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) {
        bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xFF);
      }
      auto r = decode_to_server(frame.encoding, bytes);  // may or may not decode
      if (!r) {
        EXPECT_EQ(r.error().code, "invalid_request");
      }
    }
  }
}

TEST(MalformedToServer, BareStructuralErrors) {
  const auto bad = [](std::string_view hex, const char* why) {
    expect_invalid_request(decode_to_server(Encoding::kBare, from_hex(hex)), why);
  };
  bad("", "empty");
  bad("04", "half a version");
  bad("0000 00 00 00 00", "version 0");
  bad("0500 00 00 00 00", "version 5");
  bad("ffff 00 00 00 00", "version 65535");
  bad("0400 02", "unknown union tag");
  bad("0400 7f", "unknown union tag 127");
  bad("0400 8001", "unknown multi-byte union tag");
  bad("0400 00 00 02 c328 00", "invalid UTF-8 action name");
  bad("0400 01 02 c328 01", "invalid UTF-8 event name");
  bad("0400 01 00 02", "bool other than 0/1");
  bad("0400 00 ffffffffffffffffff02 00 00", "id varint over 64 bits");
  bad("0400 00 00 ffffffffffffffffff01", "name length beyond the input");
  bad("0400 00 00 00 ffffffff0f 00", "args length beyond the input");
  bad("0400 00 00 00 01 ff", "args not CBOR");
  bad("0400 00 00 00 0a 8a6724426967496e74", "args truncated CBOR");
  bad("0400 00 00 00 05 82632446 6f6f01", "args with unknown compat tag");
  bad("0400 00 00 00 03 c2 41 01 00", "args with trailing CBOR byte inside data");
}

TEST(MalformedToServer, JsonAndCborStructuralErrors) {
  const auto bad = [](std::string_view json, const char* why) {
    expect_invalid_request(decode_to_server(Encoding::kJson, json), why);
  };
  bad("", "empty");
  bad("null", "not an object");
  bad("[]", "array root");
  bad(R"({})", "no body");
  bad(R"({"body":1})", "body not an object");
  bad(R"({"body":{"val":{}}})", "no tag");
  bad(R"({"body":{"tag":5,"val":{}}})", "tag not a string");
  bad(R"({"body":{"tag":"ActionRequest"}})", "no val");
  bad(R"({"body":{"tag":"ActionRequest","val":[]}})", "val not an object");
  bad(R"({"body":{"tag":"Nope","val":{}}})", "unknown tag");
  bad(R"({"body":{"tag":"ActionRequest","val":{"name":"a","args":[]}}})", "no id");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":"1","name":"a","args":[]}}})", "string id");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":-1,"name":"a","args":[]}}})", "negative id");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":1.5,"name":"a","args":[]}}})", "fraction id");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":["$BigInt","-1"],"name":"a","args":[]}}})",
      "negative bigint id");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":["$BigInt","18446744073709551616"],"name":"a","args":[]}}})",
      "id over 64 bits");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":["$Big","1"],"name":"a","args":[]}}})",
      "wrong id tag");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":0,"args":[]}}})", "no name");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":0,"name":1,"args":[]}}})", "name not string");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":0,"name":"a"}}})", "no args");
  bad(R"({"body":{"tag":"ActionRequest","val":{"id":0,"name":"a","args":[["$Nope",1]]}}})",
      "unknown compat tag in args");
  bad(R"({"body":{"tag":"SubscriptionRequest","val":{"eventName":"e"}}})", "no subscribe");
  bad(R"({"body":{"tag":"SubscriptionRequest","val":{"eventName":"e","subscribe":1}}})",
      "subscribe not bool");
  bad(R"({"body":{"tag":"SubscriptionRequest","val":{"subscribe":true}}})", "no eventName");
  bad("\x04\x00\x00\x00\x00\x00", "BARE bytes under the JSON encoding");
  // ws-edge-cases.txt "garbage": bytes that are not a frame at all.
  expect_invalid_request(decode_to_server(Encoding::kCbor, from_hex("ff00ff00")), "cbor garbage");
  expect_invalid_request(
      decode_to_server(Encoding::kCbor, from_hex("a164626f6479a26374616761586376616ca0")),
      "cbor unknown tag");
  expect_invalid_request(decode_to_server(Encoding::kJson, std::string(100000, '[')), "depth bomb");
}

TEST(MalformedToServer, RespectsDecodeLimits) {
  DecodeLimits limits;
  limits.max_items = 2;
  const std::string frame =
      R"({"body":{"tag":"ActionRequest","val":{"id":0,"name":"a","args":[1,2,3]}}})";
  expect_invalid_request(decode_to_server(Encoding::kJson, frame, limits), "too many args");
  limits.max_items = 8;
  limits.max_depth = 3;
  expect_invalid_request(decode_to_server(Encoding::kJson, frame, limits), "too deep");
  limits.max_depth = 4;
  EXPECT_TRUE(decode_to_server(Encoding::kJson, frame, limits).has_value());
}

TEST(MalformedHttp, ActionBodies) {
  const std::string bare = from_hex("0400028105");
  for (std::size_t n = 0; n < bare.size(); ++n) {
    EXPECT_FALSE(decode_http_action_request(Encoding::kBare, bare.substr(0, n)).has_value()) << n;
  }
  const std::string cbor = from_hex("b9000164617267738105");
  for (std::size_t n = 0; n < cbor.size(); ++n) {
    EXPECT_FALSE(decode_http_action_request(Encoding::kCbor, cbor.substr(0, n)).has_value()) << n;
  }
  const std::string json = R"({"args":[5]})";
  for (std::size_t n = 0; n < json.size(); ++n) {
    EXPECT_FALSE(decode_http_action_request(Encoding::kJson, json.substr(0, n)).has_value()) << n;
  }
  for (std::string_view bad : {"[5]", "5", "null", R"({"args":["$Nope",1]})", "{\"args\":[5]} x"}) {
    auto r = decode_http_action_request(Encoding::kJson, bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().qualified_code(), "actor.invalid_request");
  }
  EXPECT_FALSE(decode_http_action_request(Encoding::kBare, from_hex("0400028105ff")).has_value());
  EXPECT_FALSE(decode_http_action_request(Encoding::kBare, from_hex("0000028105")).has_value());
  EXPECT_FALSE(decode_http_action_request(Encoding::kBare, from_hex("0500028105")).has_value());
  EXPECT_FALSE(decode_http_action_request(Encoding::kCbor, from_hex("8105")).has_value());
}

TEST(MalformedHttp, QueueBodies) {
  const std::string bare = from_hex("040006b9000161780101046a6f62730101018813000000000000");
  ASSERT_TRUE(decode_http_queue_send(Encoding::kBare, bare).has_value());
  for (std::size_t n = 0; n < bare.size(); ++n) {
    auto r = decode_http_queue_send(Encoding::kBare, bare.substr(0, n));
    ASSERT_FALSE(r.has_value()) << n;
    EXPECT_EQ(r.error().qualified_code(), "actor.invalid_request");
  }
  EXPECT_FALSE(decode_http_queue_send(Encoding::kBare, bare + '\0').has_value());
  EXPECT_FALSE(decode_http_queue_send(Encoding::kBare, from_hex("0400 01f6 02 00 00"))
                   .has_value());  // opt tag 2
  EXPECT_FALSE(
      decode_http_queue_send(Encoding::kBare, from_hex("0400 01f6 01 02c328 00 00")).has_value());
  const std::string cbor = from_hex(
      "b9000464626f6479b90001617801646e616d65646a6f62736477616974f56774696d656f7574191388");
  for (std::size_t n = 0; n < cbor.size(); ++n) {
    EXPECT_FALSE(decode_http_queue_send(Encoding::kCbor, cbor.substr(0, n)).has_value()) << n;
  }
}

}  // namespace
}  // namespace rivetkit::protocol::client
