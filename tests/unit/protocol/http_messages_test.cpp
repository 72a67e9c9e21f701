// HTTP action, queue and error bodies (client-protocol.md §6.2-§6.5, §9 #1-#3, #11-#13) and the
// captured misc-* exchanges.

#include "protocol/cbor/cbor.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/compat.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rivetkit::protocol::client {
namespace {

using test::from_hex;
using test::to_hex;

Value big(std::string_view decimal) {
  return Value(*BigInt::parse(decimal));
}

Array args_ok(Encoding e, std::string_view body) {
  auto v = decode_http_action_request(e, body);
  EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
  return v ? *v : Array{};
}

QueueSendRequest queue_ok(Encoding e, std::string_view body) {
  auto v = decode_http_queue_send(e, body);
  EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
  return v ? *v : QueueSendRequest{};
}

const Value kExoticArgs =
    Value::array({big("1"), Bytes{9, 8}, Undefined{}, nullptr, "s", Value::object({{"m", 1.5}})});

TEST(Encodings, NamesHeadersAndContentTypes) {
  EXPECT_EQ(parse_encoding("json"), Encoding::kJson);
  EXPECT_EQ(parse_encoding("cbor"), Encoding::kCbor);
  EXPECT_EQ(parse_encoding("bare"), Encoding::kBare);
  EXPECT_EQ(parse_encoding("BARE"), std::nullopt);
  EXPECT_EQ(parse_encoding(""), std::nullopt);
  EXPECT_EQ(encoding_name(Encoding::kCbor), "cbor");
  EXPECT_EQ(http_encoding_from_header("cbor"), Encoding::kCbor);
  EXPECT_EQ(http_encoding_from_header("bare"), Encoding::kBare);
  EXPECT_EQ(http_encoding_from_header("json"), Encoding::kJson);
  EXPECT_EQ(http_encoding_from_header(""), Encoding::kJson);
  EXPECT_EQ(http_encoding_from_header("msgpack"), Encoding::kJson);
  EXPECT_EQ(http_encoding_from_header("Bare"), Encoding::kJson);
  EXPECT_EQ(content_type(Encoding::kJson), "application/json");
  EXPECT_EQ(content_type(Encoding::kCbor), "application/octet-stream");
  EXPECT_EQ(content_type(Encoding::kBare), "application/octet-stream");
  EXPECT_TRUE(is_text(Encoding::kJson));
  EXPECT_FALSE(is_text(Encoding::kBare));
}

// ---- actions -----------------------------------------------------------------------------------

TEST(HttpAction, IncrementVectors) {
  // §6.3 / §9 #1-#3: increment(5) -> 5.
  EXPECT_EQ(args_ok(Encoding::kJson, R"({"args":[5]})"), (Array{5}));
  EXPECT_EQ(encode_http_action_response(Encoding::kJson, Value(5)), R"({"output":5})");
  EXPECT_EQ(args_ok(Encoding::kCbor, from_hex("b9000164617267738105")), (Array{5}));
  EXPECT_EQ(to_hex(encode_http_action_response(Encoding::kCbor, Value(5))), "a1666f757470757405");
  EXPECT_EQ(args_ok(Encoding::kBare, from_hex("0400028105")), (Array{5}));
  EXPECT_EQ(to_hex(encode_http_action_response(Encoding::kBare, Value(5))), "04000105");
  EXPECT_EQ(args_ok(Encoding::kBare, from_hex("04000180")), Array{});  // getCount()
}

TEST(HttpAction, ArgsNormalization) {
  // An array is the list, null/absent is none, anything else one argument.
  EXPECT_EQ(args_ok(Encoding::kJson, R"({"args":7})"), (Array{7}));  // [V] in gateway-curl.txt
  EXPECT_EQ(args_ok(Encoding::kJson, R"({"args":null})"), Array{});
  EXPECT_EQ(args_ok(Encoding::kJson, R"({})"), Array{});
  EXPECT_EQ(args_ok(Encoding::kJson, R"({"args":[]})"), Array{});
  EXPECT_EQ(args_ok(Encoding::kJson, R"({"args":"x","other":1})"), (Array{"x"}));
  EXPECT_EQ(args_ok(Encoding::kJson, R"({"args":{"a":1}})"), (Array{Value::object({{"a", 1}})}));
  EXPECT_EQ(args_ok(Encoding::kCbor, from_hex("a16461726773f7")), Array{});
  EXPECT_EQ(args_ok(Encoding::kCbor, from_hex("a1646172677307")), (Array{7}));
  EXPECT_EQ(args_ok(Encoding::kBare, from_hex("040000")), Array{});       // empty data
  EXPECT_EQ(args_ok(Encoding::kBare, from_hex("040001f6")), Array{});     // null
  EXPECT_EQ(args_ok(Encoding::kBare, from_hex("04000107")), (Array{7}));  // one argument
}

TEST(HttpAction, EscapedArgsArrayIsRevivedWhole) {
  // action("$x", 1): the client escapes the args array itself to ["$$x", 1].
  EXPECT_EQ(args_ok(Encoding::kJson, R"({"args":["$$x",1]})"), (Array{"$x", 1}));
  EXPECT_EQ(args_ok(Encoding::kBare, from_hex("040006826324247801")), (Array{"$x", 1}));
}

TEST(HttpAction, EchoExoticValues) {
  // misc-json: the JSON transport carries compat tags (undefined already became null).
  EXPECT_EQ(args_ok(Encoding::kJson,
                    R"({"args":[["$BigInt","1"],["$Uint8Array","CQg="],null,null,"s",{"m":1.5}]})"),
            (Array{big("1"), Bytes{9, 8}, nullptr, nullptr, "s", Value::object({{"m", 1.5}})}));
  EXPECT_EQ(encode_http_action_response(Encoding::kJson,
                                        Value::array({big("1"), Bytes{9, 8}, nullptr, nullptr, "s",
                                                      Value::object({{"m", 1.5}})})),
            R"({"output":[["$BigInt","1"],["$Uint8Array","CQg="],null,null,"s",{"m":1.5}]})");

  // misc-cbor: raw cbor-x values, which rivetkit-core rejected and we accept.
  EXPECT_EQ(Value(args_ok(Encoding::kCbor,
                          from_hex("b900016461726773861b0000000000000001d840420908f7f66173b9000161"
                                   "6dfb3ff8000000000000"))),
            kExoticArgs);

  // §9 #11 (bare): compat-CBOR args; our reply differs from cbor-x's only in the map head.
  const std::string request =
      "04003c86826724426967496e746131826b2455696e74384172726179644351673d826a24556e646566696e65"
      "6400f66173b90001616dfb3ff8000000000000";
  EXPECT_EQ(Value(args_ok(Encoding::kBare, from_hex(request))), kExoticArgs);
  const std::string reply = encode_http_action_response(Encoding::kBare, kExoticArgs);
  EXPECT_EQ(to_hex(reply),
            "04003a86826724426967496e746131826b2455696e74384172726179644351673d826a24556e646566696e"
            "656400f66173a1616dfb3ff8000000000000");
  EXPECT_EQ(Value(args_ok(Encoding::kBare, reply)), kExoticArgs);
}

TEST(HttpAction, EchoPlainValues) {
  const Array plain{1, "two", Value::array({3}), Value::object({{"four", 4.5}}), nullptr, true};
  // §9 #12 (bare) and the json/cbor captures.
  EXPECT_EQ(args_ok(Encoding::kBare,
                    from_hex("04001b86016374776f8103b9000164666f7572fb4012000000000000f6f5")),
            plain);
  EXPECT_EQ(to_hex(encode_http_action_response(Encoding::kBare, Value(plain))),
            "04001986016374776f8103a164666f7572fb4012000000000000f6f5");
  EXPECT_EQ(args_ok(Encoding::kJson, R"({"args":[1,"two",[3],{"four":4.5},null,true]})"), plain);
  EXPECT_EQ(encode_http_action_response(Encoding::kJson, Value(plain)),
            R"({"output":[1,"two",[3],{"four":4.5},null,true]})");
  EXPECT_EQ(
      args_ok(Encoding::kCbor,
              from_hex("b90001646172677386016374776f8103b9000164666f7572fb4012000000000000f6f5")),
      plain);
  // rivetkit-core wrote 4.5 as a half float (f94480); both decode to the same value.
  const std::string ours = encode_http_action_response(Encoding::kCbor, Value(plain));
  EXPECT_EQ(to_hex(ours), "a1666f757470757486016374776f8103a164666f7572fb4012000000000000f6f5");
  EXPECT_EQ(*cbor_decode(ours),
            *cbor_decode(from_hex("a1666f757470757486016374776f8103a164666f7572f94480f6f5")));
}

TEST(HttpAction, UndefinedOutput) {
  // The TS client requires `output`: a void action answers null in JSON (rivetkit-core does too).
  EXPECT_EQ(encode_http_action_response(Encoding::kJson, Value(Undefined{})), R"({"output":null})");
  EXPECT_EQ(to_hex(encode_http_action_response(Encoding::kBare, Value(Undefined{}))),
            "04000d826a24556e646566696e656400");
}

// ---- queue -------------------------------------------------------------------------------------

TEST(HttpQueue, BareVectors) {
  // §6.4 wait: body {x:1}, name jobs, wait true, timeout 5000.
  const auto wait =
      queue_ok(Encoding::kBare,
               from_hex("0400 | 06 b90001617801 | 01 04 6a6f6273 | 01 01 | 01 8813000000000000"));
  EXPECT_EQ(wait.body, Value::object({{"x", 1}}));
  EXPECT_EQ(wait.name, "jobs");
  EXPECT_TRUE(wait.wait);
  EXPECT_EQ(wait.timeout_ms, 5000u);
  const auto no_wait =
      queue_ok(Encoding::kBare, from_hex("0400 | 06 b90001617902 | 01 04 6a6f6273 | 01 00 | 00"));
  EXPECT_EQ(no_wait.body, Value::object({{"y", 2}}));
  EXPECT_FALSE(no_wait.wait);
  EXPECT_EQ(no_wait.timeout_ms, std::nullopt);
  const auto bare_minimum = queue_ok(Encoding::kBare, from_hex("0400 | 01 f7 | 00 | 00 | 00"));
  EXPECT_EQ(bare_minimum.body, Value(Undefined{}));
  EXPECT_EQ(bare_minimum.name, std::nullopt);
  EXPECT_FALSE(bare_minimum.wait);

  EXPECT_EQ(to_hex(encode_http_queue_send_response(Encoding::kBare, "completed", std::nullopt)),
            "040009636f6d706c6574656400");
  // The captured reply carries cbor-x's b9 map heads; ours are minimal.
  const std::string reply = encode_http_queue_send_response(
      Encoding::kBare, "completed", Value::object({{"got", Value::object({{"x", 1}})}}));
  EXPECT_EQ(to_hex(reply), "040009636f6d706c657465640109a163676f74a1617801");
  EXPECT_EQ(*cbor_decode(from_hex("a163676f74a1617801")),
            *cbor_decode(from_hex("b9000163676f74b90001617801")));
}

TEST(HttpQueue, JsonVectors) {
  const auto wait =
      queue_ok(Encoding::kJson, R"({"body":{"x":1},"name":"jobs","wait":true,"timeout":5000})");
  EXPECT_EQ(wait.body, Value::object({{"x", 1}}));
  EXPECT_EQ(wait.name, "jobs");
  EXPECT_TRUE(wait.wait);
  EXPECT_EQ(wait.timeout_ms, 5000u);
  const auto no_wait = queue_ok(Encoding::kJson, R"({"body":{"y":2},"name":"jobs","wait":false})");
  EXPECT_FALSE(no_wait.wait);
  EXPECT_EQ(no_wait.timeout_ms, std::nullopt);
  const auto defaults = queue_ok(Encoding::kJson, R"({"body":["$BigInt","9"]})");
  EXPECT_EQ(defaults.body, big("9"));
  EXPECT_FALSE(defaults.wait);
  EXPECT_EQ(defaults.name, std::nullopt);
  EXPECT_EQ(queue_ok(Encoding::kJson, R"({"name":"jobs"})").body, Value(Undefined{}));
  EXPECT_EQ(queue_ok(Encoding::kJson, R"({"body":1,"timeout":2.0})").timeout_ms, 2u);

  EXPECT_EQ(encode_http_queue_send_response(Encoding::kJson, "completed",
                                            Value::object({{"got", Value::object({{"x", 1}})}})),
            R"({"response":{"got":{"x":1}},"status":"completed"})");
  EXPECT_EQ(encode_http_queue_send_response(Encoding::kJson, "completed", std::nullopt),
            R"({"status":"completed"})");
  EXPECT_EQ(encode_http_queue_send_response(Encoding::kJson, "timedOut", std::nullopt),
            R"({"status":"timedOut"})");
}

TEST(HttpQueue, TheClientSideRoundTripsInEveryEncoding) {
  // Actor-to-actor sends write requests and read answers: what they write decodes as the server
  // reads the official client's, and the server's answers decode back.
  for (auto e : {Encoding::kJson, Encoding::kCbor, Encoding::kBare}) {
    QueueSendRequest request{Value::object({{"x", 1}, {"big", big("12345678901234567890")}}),
                             "jobs", true, 5000};
    const auto decoded = queue_ok(e, encode_http_queue_send_request(e, request));
    EXPECT_EQ(decoded.body, request.body);
    EXPECT_EQ(decoded.name, "jobs");
    EXPECT_TRUE(decoded.wait);
    EXPECT_EQ(decoded.timeout_ms, 5000u);
    const auto no_wait =
        queue_ok(e, encode_http_queue_send_request(e, {Value(1), "jobs", false, std::nullopt}));
    EXPECT_FALSE(no_wait.wait);
    EXPECT_EQ(no_wait.timeout_ms, std::nullopt);

    auto answered = decode_http_queue_send_response(
        e, encode_http_queue_send_response(e, "completed", Value::object({{"got", 1}})));
    ASSERT_TRUE(answered) << answered.error().message;
    EXPECT_EQ(answered->status, "completed");
    EXPECT_EQ(answered->response, Value::object({{"got", 1}}));
    auto timed_out = decode_http_queue_send_response(
        e, encode_http_queue_send_response(e, "timedOut", std::nullopt));
    ASSERT_TRUE(timed_out);
    EXPECT_EQ(timed_out->status, "timedOut");
    EXPECT_FALSE(timed_out->response);
  }
  EXPECT_EQ(encode_http_queue_send_request(Encoding::kJson, {Value(1), "jobs", false, 250}),
            R"({"body":1,"name":"jobs","wait":false,"timeout":250})");
  EXPECT_FALSE(decode_http_queue_send_response(Encoding::kJson, R"({"response":1})"))
      << "status is required";
  EXPECT_FALSE(decode_http_queue_send_response(Encoding::kBare, std::string("\x04\x00", 2)));
}

TEST(HttpQueue, CborVectors) {
  // cbor-x writes an omitted timeout as undefined.
  const auto no_wait = queue_ok(
      Encoding::kCbor,
      from_hex("b9000464626f6479b90001617902646e616d65646a6f62736477616974f46774696d656f7574f7"));
  EXPECT_EQ(no_wait.body, Value::object({{"y", 2}}));
  EXPECT_EQ(no_wait.name, "jobs");
  EXPECT_FALSE(no_wait.wait);
  EXPECT_EQ(no_wait.timeout_ms, std::nullopt);
  const auto wait = queue_ok(
      Encoding::kCbor,
      from_hex(
          "b9000464626f6479b90001617801646e616d65646a6f62736477616974f56774696d656f7574191388"));
  EXPECT_TRUE(wait.wait);
  EXPECT_EQ(wait.timeout_ms, 5000u);

  EXPECT_EQ(to_hex(encode_http_queue_send_response(
                Encoding::kCbor, "completed", Value::object({{"got", Value::object({{"x", 1}})}}))),
            "a268726573706f6e7365a163676f74a16178016673746174757369636f6d706c65746564");
  EXPECT_EQ(to_hex(encode_http_queue_send_response(Encoding::kCbor, "completed", std::nullopt)),
            "a16673746174757369636f6d706c65746564");
}

TEST(HttpQueue, RejectsWrongFieldTypes) {
  for (std::string_view bad :
       {R"({"body":1,"name":5})", R"({"body":1,"wait":"yes"})", R"({"body":1,"timeout":-1})",
        R"({"body":1,"timeout":1.5})", R"({"body":1,"timeout":"5"})", R"([1])",
        R"({"body":["$Nope",1]})"}) {
    auto v = decode_http_queue_send(Encoding::kJson, bad);
    ASSERT_FALSE(v.has_value()) << bad;
    EXPECT_EQ(v.error().qualified_code(), "actor.invalid_request");
  }
}

// ---- errors ------------------------------------------------------------------------------------

const ActorSpecifier kJsonActor{"hsc5b0sanptib30vuzf6wqsjaacl00", 1, "misc-json-r2"};
const ActorSpecifier kCborActor{"txc28ztch6fa58xjm8ukcjamcial00", 1, "misc-cbor-r2"};
const ActorSpecifier kBareActor{"tlnaoasjr36otjr3rhq5gv0pvycl00", 1, "misc-bare-r2"};

ErrorMessage user_error(const ActorSpecifier& actor) {
  return ErrorMessage{
      "user",       "my_code", "this action always fails", Value::object({{"a", 1}}),
      std::nullopt, actor};
}

ErrorMessage not_found(const ActorSpecifier& actor) {
  return ErrorMessage{"actor",      "action_not_found", "Action `nope` was not found.",
                      std::nullopt, std::nullopt,       actor};
}

TEST(HttpError, JsonVectors) {
  EXPECT_EQ(
      encode_http_error(Encoding::kJson, user_error(kJsonActor)),
      R"({"actor":{"actorId":"hsc5b0sanptib30vuzf6wqsjaacl00","generation":1,"key":"misc-json-r2"},"code":"my_code","group":"user","message":"this action always fails","metadata":{"a":1}})");
  EXPECT_EQ(
      encode_http_error(Encoding::kJson, not_found(kJsonActor)),
      R"({"actor":{"actorId":"hsc5b0sanptib30vuzf6wqsjaacl00","generation":1,"key":"misc-json-r2"},"code":"action_not_found","group":"actor","message":"Action `nope` was not found."})");
  ErrorMessage bare_error{"actor", "invalid_request", "bad", std::nullopt, 5, std::nullopt};
  EXPECT_EQ(encode_http_error(Encoding::kJson, bare_error),
            R"({"code":"invalid_request","group":"actor","message":"bad"})");  // action_id ignored
}

TEST(HttpError, CborVectors) {
  EXPECT_EQ(to_hex(encode_http_error(Encoding::kCbor, user_error(kCborActor))),
            "a5656163746f72a3676163746f724964781e74786332387a7463683666613538786a6d38756b636a616d"
            "6369616c30306a67656e65726174696f6e01636b65796c6d6973632d63626f722d723264636f6465676d"
            "795f636f64656567726f75706475736572676d65737361676578187468697320616374696f6e20616c77"
            "617973206661696c73686d65746164617461a1616101");
  EXPECT_EQ(to_hex(encode_http_error(Encoding::kCbor, not_found(kCborActor))),
            "a4656163746f72a3676163746f724964781e74786332387a7463683666613538786a6d38756b636a616d"
            "6369616c30306a67656e65726174696f6e01636b65796c6d6973632d63626f722d723264636f64657061"
            "6374696f6e5f6e6f745f666f756e646567726f7570656163746f72676d657373616765781c416374696f"
            "6e20606e6f70656020776173206e6f7420666f756e642e");
  const ErrorMessage internal{"core",       "internal_error", "An internal error occurred",
                              std::nullopt, std::nullopt,     kCborActor};
  EXPECT_EQ(to_hex(encode_http_error(Encoding::kCbor, internal)),
            "a4656163746f72a3676163746f724964781e74786332387a7463683666613538786a6d38756b636a616d"
            "6369616c30306a67656e65726174696f6e01636b65796c6d6973632d63626f722d723264636f64656e69"
            "6e7465726e616c5f6572726f726567726f757064636f7265676d657373616765781a416e20696e746572"
            "6e616c206572726f72206f63637572726564");
}

TEST(HttpError, BareVectors) {
  // §9 #13
  EXPECT_EQ(to_hex(encode_http_error(Encoding::kBare, user_error(kBareActor))),
            "04000475736572076d795f636f6465187468697320616374696f6e20616c77617973206661696c730104"
            "a1616101011e746c6e616f61736a7233366f746a723372687135677630707679636c303001010c6d6973"
            "632d626172652d7232");
  // §6.5 unknown action
  EXPECT_EQ(to_hex(encode_http_error(Encoding::kBare, not_found(kBareActor))),
            "0400056163746f7210616374696f6e5f6e6f745f666f756e641c416374696f6e20606e6f706560207761"
            "73206e6f7420666f756e642e00011e746c6e616f61736a7233366f746a723372687135677630707679636c"
            "303001010c6d6973632d626172652d7232");
  // gateway-curl.txt: an undecodable bare body.
  const ErrorMessage internal{"core",
                              "internal_error",
                              "An internal error occurred",
                              std::nullopt,
                              std::nullopt,
                              ActorSpecifier{"dxls2p51poa05i79ejy26uqjkjbl00", 1, "curl-a"}};
  EXPECT_EQ(to_hex(encode_http_error(Encoding::kBare, internal)),
            "040004636f72650e696e7465726e616c5f6572726f721a416e20696e7465726e616c206572726f72206f"
            "6363757272656400011e64786c7332703531706f613035693739656a79323675716a6b6a626c3030010106"
            "6375726c2d61");
  const ErrorMessage no_actor{"actor",      "invalid_request", "bad",
                              std::nullopt, std::nullopt,      std::nullopt};
  EXPECT_EQ(to_hex(encode_http_error(Encoding::kBare, no_actor)),
            "0400056163746f720f696e76616c69645f726571756573740362616400"
            "00");
}

TEST(HttpError, MetadataIsCompatTagged) {
  const ErrorMessage err{"user",       "c",         "m", Value::object({{"n", big("7")}}),
                         std::nullopt, std::nullopt};
  EXPECT_EQ(encode_http_error(Encoding::kJson, err),
            R"({"code":"c","group":"user","message":"m","metadata":{"n":["$BigInt","7"]}})");
}

}  // namespace
}  // namespace rivetkit::protocol::client
