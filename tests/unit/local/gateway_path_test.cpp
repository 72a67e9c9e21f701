// The gateway forms of client-protocol.md §5 with the engine's rules and error codes.

#include "local/gateway_path.hpp"

#include <gtest/gtest.h>

namespace rivetkit::local {
namespace {

std::string error_code(std::string_view target) {
  auto r = parse_gateway_target(target);
  return r ? "ok" : r.error().qualified_code();
}

TEST(GatewayPath, DirectIdWithAndWithoutToken) {
  auto r = parse_gateway_target("/gateway/abc123/action/increment");
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->direct);
  EXPECT_EQ(r->direct->actor_id, "abc123");
  EXPECT_FALSE(r->direct->token);
  EXPECT_EQ(r->actor_path, "/action/increment");

  r = parse_gateway_target("/gateway/abc%20x@my-secret/connect");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->direct->actor_id, "abc x");
  EXPECT_EQ(r->direct->token, "my-secret");
  EXPECT_EQ(r->actor_path, "/connect");

  r = parse_gateway_target("/gateway/abc");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->actor_path, "/");
  EXPECT_EQ(error_code("/gateway/@tok/x"), "guard.no_route");
  EXPECT_EQ(error_code("/gateway/id@/x"), "guard.no_route");
}

TEST(GatewayPath, DirectKeepsTheQueryForTheActor) {
  auto r = parse_gateway_target("/gateway/abc/request/hello?x=1&y=%202");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->actor_path, "/request/hello?x=1&y=%202");
}

TEST(GatewayPath, QueryFormFromTheClientVectors) {
  auto r = parse_gateway_target(
      "/gateway/counter/request/hello/world?x=1&y=2&rvt-namespace=default&rvt-method=getOrCreate"
      "&rvt-runner=default&rvt-key=a%2Cb%2Cc%2Fd%2C&rvt-input="
      "uQACZWhlbGxvZXdvcmxkYW6CZyRCaWdJbnRhMQ"
      "&rvt-crash-policy=sleep");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->query);
  const auto& q = *r->query;
  EXPECT_EQ(q.name, "counter");
  EXPECT_EQ(q.namespace_name, "default");
  EXPECT_EQ(q.method, QueryTarget::Method::kGetOrCreate);
  EXPECT_EQ(q.pool, "default");
  EXPECT_EQ(q.key, (std::vector<std::string>{"a", "b", "c/d", ""}));
  ASSERT_TRUE(q.input);
  EXPECT_EQ(q.crash_policy, "sleep");
  // rvt-* pairs are removed; the others stay byte for byte, in order.
  EXPECT_EQ(r->actor_path, "/request/hello/world?x=1&y=2");
}

TEST(GatewayPath, QueryGetWithoutKeyMeansEmptyKey) {
  auto r =
      parse_gateway_target("/gateway/counter/action/getCount?rvt-namespace=default&rvt-method=get");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->query->key.empty());
  EXPECT_EQ(r->actor_path, "/action/getCount");
}

TEST(GatewayPath, QueryErrorsUseTheEngineCodes) {
  const std::string base = "/gateway/counter/connect?rvt-namespace=default&";
  EXPECT_EQ(error_code(base + "rvt-method=get&rvt-bogus=1"), "guard.query_invalid_params");
  EXPECT_EQ(error_code(base + "rvt-method=get&rvt-method=get"), "guard.query_duplicate_param");
  EXPECT_EQ(error_code(base + "rvt-method=delete"), "guard.query_invalid_params");
  EXPECT_EQ(error_code(base + "rvt-method=getOrCreate"), "guard.query_missing_pool");
  EXPECT_EQ(error_code(base + "rvt-method=get&rvt-runner=default"),
            "guard.query_get_disallowed_params");
  EXPECT_EQ(error_code(base + "rvt-method=get&rvt-input=AA"), "guard.query_get_disallowed_params");
  EXPECT_EQ(error_code("/gateway/count@er/connect?rvt-namespace=default&rvt-method=get"),
            "guard.query_path_token_syntax");
  EXPECT_EQ(error_code("/gateway//connect?rvt-namespace=default&rvt-method=get"),
            "guard.query_empty_actor_name");
  EXPECT_EQ(error_code(base + "rvt-method=getOrCreate&rvt-runner=default&rvt-input=%%%"),
            "guard.query_invalid_params");
  EXPECT_EQ(error_code(base + "rvt-method=getOrCreate&rvt-runner=default&rvt-input=*"),
            "guard.query_invalid_base64_input");
  // 0x1c is a reserved CBOR head: valid base64url, invalid CBOR.
  EXPECT_EQ(error_code(base + "rvt-method=getOrCreate&rvt-runner=default&rvt-input=HA"),
            "guard.query_invalid_cbor_input");
}

// Ids, names, keys and the other rvt values become protocol strings (BARE/CBOR/JSON text), so
// bytes that are not UTF-8 are refused instead of being stored (two such keys would otherwise
// list as the same U+FFFD text in JSON).
TEST(GatewayPath, InvalidUtf8IsRefused) {
  const std::string base = "/gateway/counter/connect?rvt-namespace=default&rvt-method=get";
  EXPECT_EQ(error_code(base + "&rvt-key=%ff%fe"), "guard.query_invalid_params");
  EXPECT_EQ(error_code(base + "&rvt-key=ok,%c0%80"), "guard.query_invalid_params");  // overlong
  EXPECT_EQ(error_code(base + "&rvt-key=%ed%a0%80"), "guard.query_invalid_params");  // surrogate
  EXPECT_EQ(error_code(base + "&rvt-key=\xff"), "guard.query_invalid_params");       // raw byte
  EXPECT_EQ(error_code(base + "&rvt-token=%80"), "guard.query_invalid_params");
  EXPECT_EQ(error_code("/gateway/count%ffer/connect?rvt-namespace=default&rvt-method=get"),
            "guard.query_invalid_params");
  EXPECT_EQ(error_code("/gateway/counter/connect?rvt-namespace=%fe&rvt-method=get"),
            "guard.query_invalid_params");
  EXPECT_EQ(error_code("/gateway/ab%ffc/connect"), "guard.no_route");
  EXPECT_EQ(error_code("/gateway/abc@t%ff/connect"), "guard.no_route");

  // Valid multi-byte UTF-8 is fine, escaped or raw.
  auto r = parse_gateway_target(base + "&rvt-key=%C3%A9t%C3%A9,\xe2\x82\xac");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->query->key, (std::vector<std::string>{"\xc3\xa9t\xc3\xa9", "\xe2\x82\xac"}));
  // Non-rvt pairs are forwarded byte for byte, whatever they contain: the actor decides.
  r = parse_gateway_target(base + "&x=%ff");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->actor_path, "/connect?x=%ff");
}

TEST(GatewayPath, RawRequestPaths) {
  EXPECT_TRUE(is_raw_request_path("/request"));
  EXPECT_TRUE(is_raw_request_path("/request/x"));
  EXPECT_FALSE(is_raw_request_path("/requests"));
  EXPECT_FALSE(is_raw_request_path("/action/x"));
}

}  // namespace
}  // namespace rivetkit::local
