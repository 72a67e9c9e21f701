// What a serverless `/start` carries (envoy-protocol.md §5): headers checked against the
// configuration with RivetKit's errors, the body's single start command (the captured body of §5),
// and the metadata payload the engine polls.

#include "serverless/start_request.hpp"

#include "protocol/envoy/codec.hpp"
#include "serverless/metadata.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rivetkit::serverless {
namespace {

namespace envoy = protocol::envoy;

std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string hex_of(std::string_view text) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

// The captured body: version 8, one CommandStartActor of actor 5rryjl..., generation 1, index 0,
// name "counter", no key, no input.
std::string captured_body() {
  return from_hex(
      "0800"
      "01"
      "01"
      "1e"
      + hex_of("5rryjl5poymlxxlfmr7cy47sjobl00") + "01000000" + "0000000000000000" + "00" + "07"
      + hex_of("counter") + "00" + "2e145c36a2010000" + "00" + "00" + "00");
}

net::Headers engine_headers() {
  return {{"x-rivet-endpoint", "http://127.0.0.1:8420/"},
          {"x-rivet-pool-name", "sl"},
          {"x-rivet-namespace-name", "default"},
          {"accept", "text/event-stream"}};
}

TEST(StartRequestTest, TheEnginesHeadersNameTheEnvoy) {
  auto h = parse_start_headers(engine_headers(), {});
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->endpoint, "http://127.0.0.1:8420") << "a trailing slash is ignored";
  EXPECT_EQ(h->pool, "sl");
  EXPECT_EQ(h->namespace_name, "default");
  EXPECT_FALSE(h->token);

  auto legacy = engine_headers();
  legacy[1].name = "x-rivet-runner-name";
  legacy.push_back({"x-rivet-token", "secret"});
  auto l = parse_start_headers(legacy, {std::string("http://127.0.0.1:8420"), "default"});
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->pool, "sl");
  EXPECT_EQ(l->token, "secret");
}

TEST(StartRequestTest, MissingOrForeignHeadersAreRivetKitErrors) {
  for (const char* missing : {"x-rivet-endpoint", "x-rivet-pool-name", "x-rivet-namespace-name"}) {
    net::Headers h;
    for (auto& header : engine_headers()) {
      if (header.name != missing) {
        h.push_back(header);
      }
    }
    auto r = parse_start_headers(h, {});
    ASSERT_FALSE(r) << missing;
    EXPECT_EQ(r.error().qualified_code(), "request.invalid");
    EXPECT_NE(r.error().message.find(missing), std::string::npos);
    EXPECT_EQ(start_error_status(r.error()), 400u);
  }
  auto other =
      parse_start_headers(engine_headers(), {std::string("http://10.0.0.1:6420"), "default"});
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().qualified_code(), "config.endpoint_mismatch");
  EXPECT_EQ(start_error_status(other.error()), 400u);
  auto ns = parse_start_headers(engine_headers(), {std::nullopt, "prod"});
  ASSERT_FALSE(ns);
  EXPECT_EQ(ns.error().qualified_code(), "config.namespace_mismatch");
}

TEST(StartRequestTest, TheBodyIsOneStartCommand) {
  auto command = parse_start_body(captured_body());
  ASSERT_TRUE(command) << command.error().message;
  EXPECT_EQ(command->checkpoint.actor_id, "5rryjl5poymlxxlfmr7cy47sjobl00");
  EXPECT_EQ(command->checkpoint.generation, 1u);
  EXPECT_EQ(command->checkpoint.index, 0);
  const auto& start = std::get<envoy::CommandStartActor>(command->inner);
  EXPECT_EQ(start.config.name, "counter");
  EXPECT_FALSE(start.config.key);
  EXPECT_EQ(start.config.create_ts, 1796208333870);

  for (std::string bad : {std::string(), std::string("\x08"), std::string("garbage"),
                          "\x07" + captured_body().substr(1)}) {
    auto r = parse_start_body(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().qualified_code(), "request.invalid");
  }
  // Two commands, or a stop, are not a start.
  auto two = envoy::decode_versioned_to_envoy(captured_body());
  ASSERT_TRUE(two);
  auto& list = std::get<envoy::ToEnvoyCommands>(*two).commands;
  list.push_back(list.front());
  EXPECT_FALSE(parse_start_body(envoy::encode_versioned(*two)));
  list.pop_back();
  list.front().inner = envoy::CommandStopActor{};
  EXPECT_FALSE(parse_start_body(envoy::encode_versioned(*two)));
}

// The engine would refuse any other id in the actor's first KV request, closing the envoy's
// connection with it: such a start is refused before anything is sent.
TEST(StartRequestTest, AStartOfAnIdTheEngineWouldRefuseIsInvalid) {
  auto decoded = envoy::decode_versioned_to_envoy(captured_body());
  ASSERT_TRUE(decoded);
  auto& start = std::get<envoy::ToEnvoyCommands>(*decoded).commands.front();
  start.checkpoint.actor_id = "0123456789abcdefghijklmnopqrst";
  auto r = parse_start_body(envoy::encode_versioned(*decoded));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().qualified_code(), "request.invalid");
  EXPECT_NE(r.error().message.find("0123456789abcdefghijklmnopqrst"), std::string::npos);
  EXPECT_EQ(start_error_status(r.error()), 400u);
}

TEST(StartRequestTest, MetadataIsTheServerlessPayload) {
  MetadataOptions options;
  options.actor_names = {"counter"};
  EXPECT_EQ(
      metadata_json(options),
      R"({"actorNames":{"counter":{"metadata":{}}},"envoy":{"kind":{"serverless":{}},"version":1},"envoyProtocolVersion":8,"runtime":"rivetkit","version":"2.3.19"})");
  options.client_endpoint = "https://api.example.com";
  EXPECT_NE(metadata_json(options).find(R"("clientEndpoint":"https://api.example.com")"),
            std::string::npos);
  EXPECT_EQ(health_json("ok"), R"({"runtime":"rivetkit","status":"ok","version":"2.3.19"})");
}

}  // namespace
}  // namespace rivetkit::serverless
