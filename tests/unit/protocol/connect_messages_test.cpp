// /connect frames (client-protocol.md §6.8, §9 #4-#10, ws-edge-cases.txt).

#include "protocol/client/messages.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace rivetkit::protocol::client {
namespace {

using test::from_hex;
using test::to_hex;

Value big(std::string_view decimal) {
  return Value(*BigInt::parse(decimal));
}

ToServer decode_ok(Encoding e, std::string_view frame) {
  auto v = decode_to_server(e, frame);
  EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
  return v ? *v : ToServer{};
}

ActionRequest action_ok(Encoding e, std::string_view frame) {
  const ToServer msg = decode_ok(e, frame);
  EXPECT_TRUE(std::holds_alternative<ActionRequest>(msg));
  return std::holds_alternative<ActionRequest>(msg) ? std::get<ActionRequest>(msg)
                                                    : ActionRequest{};
}

// ---- client -> server --------------------------------------------------------------------------

TEST(ToServer, JsonActionRequestWithBigIntId) {
  const auto req = action_ok(
      Encoding::kJson,
      R"({"body":{"tag":"ActionRequest","val":{"id":["$BigInt","0"],"name":"increment","args":[3]}}})");
  EXPECT_EQ(req.id, 0u);
  EXPECT_EQ(req.name, "increment");
  EXPECT_EQ(req.args, (Array{3}));
}

TEST(ToServer, JsonActionRequestWithPlainNumberId) {
  // ws-edge-cases.txt "no-encoding+plain-id": the Rust client sends a plain number.
  const auto req = action_ok(
      Encoding::kJson,
      R"({"body":{"tag":"ActionRequest","val":{"id":7,"name":"increment","args":[10]}}})");
  EXPECT_EQ(req.id, 7u);
  EXPECT_EQ(req.args, (Array{10}));
}

TEST(ToServer, JsonArgsAreRevived) {
  // The misc-json echo arguments: (1n, Uint8Array[9,8], undefined, null, "s", {m:1.5}).
  const auto req = action_ok(
      Encoding::kJson,
      R"({"body":{"tag":"ActionRequest","val":{"id":["$BigInt","18446744073709551615"],"name":"echo","args":[["$BigInt","1"],["$Uint8Array","CQg="],null,null,"s",{"m":1.5}]}}})");
  EXPECT_EQ(req.id, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(req.args,
            (Array{big("1"), Bytes{9, 8}, nullptr, nullptr, "s", Value::object({{"m", 1.5}})}));
}

TEST(ToServer, JsonSubscriptionRequest) {
  const ToServer msg = decode_ok(
      Encoding::kJson,
      R"({"body":{"tag":"SubscriptionRequest","val":{"eventName":"newCount","subscribe":true}}})");
  ASSERT_TRUE(std::holds_alternative<SubscriptionRequest>(msg));
  EXPECT_EQ(std::get<SubscriptionRequest>(msg).event_name, "newCount");
  EXPECT_TRUE(std::get<SubscriptionRequest>(msg).subscribe);
}

TEST(ToServer, CborActionRequestVector8) {
  const auto req = action_ok(
      Encoding::kCbor, from_hex("b9000164626f6479b90002637461676d416374696f6e526571756573746376"
                                "616cb900036269641b0000000000000000646e616d6569696e6372656d656e"
                                "7464617267738103"));
  EXPECT_EQ(req.id, 0u);
  EXPECT_EQ(req.name, "increment");
  EXPECT_EQ(req.args, (Array{3}));
}

TEST(ToServer, CborSubscriptionAndEmptyArgs) {
  const ToServer sub = decode_ok(
      Encoding::kCbor,
      from_hex(
          "b9000164626f6479b900026374616773537562736372697074696f6e526571756573746376616cb90002"
          "696576656e744e616d65686e6577436f756e7469737562736372696265f5"));
  ASSERT_TRUE(std::holds_alternative<SubscriptionRequest>(sub));
  EXPECT_EQ(std::get<SubscriptionRequest>(sub).event_name, "newCount");
  const auto fail = action_ok(
      Encoding::kCbor,
      from_hex(
          "b9000164626f6479b90002637461676d416374696f6e526571756573746376616cb900036269641b00000"
          "00000000001646e616d65646661696c646172677380"));
  EXPECT_EQ(fail.id, 1u);
  EXPECT_EQ(fail.name, "fail");
  EXPECT_TRUE(fail.args.empty());
}

TEST(ToServer, CborAcceptsRawUserValuesAndSmallIds) {
  // The cbor transport sends args without compat tagging: bigint 1b, Uint8Array tag 64,
  // undefined f7. A Rust client writes a minimal id.
  const auto req = action_ok(
      Encoding::kCbor,
      from_hex("a1 64626f6479 a2 63746167 6d416374696f6e52657175657374 6376616c a3 626964 05"
               " 646e616d65 646563686f 6461726773"
               " 86 1b0000000000000001 d840420908 f7 f6 6173 b90001616dfb3ff8000000000000"));
  EXPECT_EQ(req.id, 5u);
  EXPECT_EQ(req.args,
            (Array{big("1"), Bytes{9, 8}, Undefined{}, nullptr, "s", Value::object({{"m", 1.5}})}));
}

TEST(ToServer, BareVectors) {
  // §9 #5
  const auto req = action_ok(Encoding::kBare, from_hex("0400000009696e6372656d656e74028103"));
  EXPECT_EQ(req.id, 0u);
  EXPECT_EQ(req.name, "increment");
  EXPECT_EQ(req.args, (Array{3}));
  // fail() with empty args
  const auto fail = action_ok(Encoding::kBare, from_hex("04000001046661696c0180"));
  EXPECT_EQ(fail.id, 1u);
  EXPECT_EQ(fail.name, "fail");
  EXPECT_TRUE(fail.args.empty());
  // subscription
  const ToServer sub = decode_ok(Encoding::kBare, from_hex("040001086e6577436f756e7401"));
  ASSERT_TRUE(std::holds_alternative<SubscriptionRequest>(sub));
  EXPECT_EQ(std::get<SubscriptionRequest>(sub).event_name, "newCount");
  EXPECT_TRUE(std::get<SubscriptionRequest>(sub).subscribe);
  const ToServer unsub = decode_ok(Encoding::kBare, from_hex("040001086e6577436f756e7400"));
  EXPECT_FALSE(std::get<SubscriptionRequest>(unsub).subscribe);
}

TEST(ToServer, BareExoticArgsVector11) {
  const auto req = action_ok(
      Encoding::kBare,
      from_hex("0400 00 07 046563686f 3c"
               "86826724426967496e746131826b2455696e74384172726179644351673d826a24556e646566696e"
               "656400f66173b90001616dfb3ff8000000000000"));
  EXPECT_EQ(req.id, 7u);
  EXPECT_EQ(req.name, "echo");
  EXPECT_EQ(req.args,
            (Array{big("1"), Bytes{9, 8}, Undefined{}, nullptr, "s", Value::object({{"m", 1.5}})}));
}

TEST(ToServer, BareOlderVersionsDecode) {
  // ws-edge-cases.txt "bare-v3-request": a 03 00 prefix is accepted (and answered in v4).
  for (const char* prefix : {"0100", "0200", "0300"}) {
    const auto req = action_ok(Encoding::kBare,
                               from_hex(std::string(prefix) + "00 05 09696e6372656d656e74 028111"));
    EXPECT_EQ(req.id, 5u) << prefix;
    EXPECT_EQ(req.args, (Array{17})) << prefix;
  }
}

// ---- server -> client --------------------------------------------------------------------------

const ActorSpecifier kCborActor{"t10bafrdae8xw1u3zsmjyln1gmcl00", 1, "vec-cbor-r1"};

TEST(ToClient, InitInAllEncodings) {
  EXPECT_EQ(
      encode_to_client(Encoding::kJson, Init{"1ww2cldk0cgundsx8uid290quxcl00",
                                             "ae6018a0-09a6-4716-a52a-e815b71f0ce9"}),
      R"({"body":{"tag":"Init","val":{"actorId":"1ww2cldk0cgundsx8uid290quxcl00","connectionId":"ae6018a0-09a6-4716-a52a-e815b71f0ce9"}}})");
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kCbor, Init{"t10bafrdae8xw1u3zsmjyln1gmcl00",
                                                          "41d5d56b-734e-4297-867a-70655f4b2779"})),
            "a164626f6479a26374616764496e69746376616ca2676163746f724964781e743130626166726461653878"
            "773175337a736d6a796c6e31676d636c30306c636f6e6e656374696f6e4964782434316435643536622d37"
            "3334652d343239372d383637612d373036353566346232373739");
  // §9 #4
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kBare, Init{"lzg48duvt27jscmy5nu8brox5ecl00",
                                                          "bb47b260-09f6-4734-be1d-2fd5357fd4dd"})),
            "0400001e6c7a6734386475767432376a73636d79356e753862726f783565636c3030246262343762323630"
            "2d303966362d343733342d626531642d326664353335376664346464");
}

TEST(ToClient, ActionResponseVectors) {
  EXPECT_EQ(encode_to_client(Encoding::kJson, ActionResponse{0, Value(8)}),
            R"({"body":{"tag":"ActionResponse","val":{"id":["$BigInt","0"],"output":8}}})");
  // §9 #9: the id uses the 8-byte head even for 0.
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kCbor, ActionResponse{0, Value(8)})),
            "a164626f6479a2637461676e416374696f6e526573706f6e73656376616ca26269641b000000000000"
            "0000666f757470757408");
  // §9 #7
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kBare, ActionResponse{0, Value(8)})), "040002000108");
  // ws-edge-cases.txt: the v3 request is answered in v4.
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kBare, ActionResponse{5, Value(17)})),
            "040002050111");
  EXPECT_EQ(encode_to_client(Encoding::kJson, ActionResponse{7, Value(17)}),
            R"({"body":{"tag":"ActionResponse","val":{"id":["$BigInt","7"],"output":17}}})");
}

TEST(ToClient, EventVectors) {
  EXPECT_EQ(encode_to_client(Encoding::kJson, Event{"newCount", {8}}),
            R"({"body":{"tag":"Event","val":{"args":[8],"name":"newCount"}}})");
  // §9 #10
  EXPECT_EQ(
      to_hex(encode_to_client(Encoding::kCbor, Event{"newCount", {8}})),
      "a164626f6479a263746167654576656e746376616ca2646e616d65686e6577436f756e7464617267738108");
  // §9 #6
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kBare, Event{"newCount", {8}})),
            "040003086e6577436f756e74028108");
}

TEST(ToClient, ErrorVectors) {
  ErrorMessage err{"user",
                   "my_code",
                   "this action always fails",
                   Value::object({{"a", 1}}),
                   1,
                   ActorSpecifier{"1ww2cldk0cgundsx8uid290quxcl00", 1, "vec-json-r1"}};
  EXPECT_EQ(
      encode_to_client(Encoding::kJson, err),
      R"({"body":{"tag":"Error","val":{"actionId":["$BigInt","1"],"actor":{"actorId":"1ww2cldk0cgundsx8uid290quxcl00","generation":1,"key":"vec-json-r1"},"code":"my_code","group":"user","message":"this action always fails","metadata":{"a":1}}}})");

  err.actor = kCborActor;
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kCbor, err)),
            "a164626f6479a263746167654572726f726376616ca66567726f7570647573657264636f6465676d795f63"
            "6f6465676d65737361676578187468697320616374696f6e20616c77617973206661696c73686d657461"
            "64617461a1616101656163746f72a3676163746f724964781e743130626166726461653878773175337a"
            "736d6a796c6e31676d636c30306a67656e65726174696f6e1b0000000000000001636b65796b7665632d"
            "63626f722d723168616374696f6e49641b0000000000000001");

  err.actor = ActorSpecifier{"lzg48duvt27jscmy5nu8brox5ecl00", 1, "vec-bare-r2"};
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kBare, err)),
            "0400010475736572076d795f636f6465187468697320616374696f6e20616c77617973206661696c7301"
            "04a16161010101011e6c7a6734386475767432376a73636d79356e753862726f783565636c303001010b"
            "7665632d626172652d7232");
}

TEST(ToClient, ConnectionLevelErrorHasNullActionId) {
  const ErrorMessage err{"user",       "forbidden_token", "bad token",
                         std::nullopt, std::nullopt,      std::nullopt};
  EXPECT_EQ(
      encode_to_client(Encoding::kJson, err),
      R"({"body":{"tag":"Error","val":{"actionId":null,"code":"forbidden_token","group":"user","message":"bad token"}}})");
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kCbor, err)),
            "a164626f6479a263746167654572726f726376616ca46567726f7570647573657264636f64656f666f72"
            "62696464656e5f746f6b656e676d6573736167656962616420746f6b656e68616374696f6e4964f6");
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kBare, err)),
            "0400010475736572"
            "0f666f7262696464656e5f746f6b656e"
            "0962616420746f6b656e"
            "00"
            "00"
            "00");
}

TEST(ToClient, ActionNotFoundOverJson) {
  // ws-edge-cases.txt "unsubscribe-unknown+action-missing".
  const ErrorMessage err{"actor",
                         "action_not_found",
                         "Action `nope` was not found.",
                         std::nullopt,
                         3,
                         ActorSpecifier{"dxls2p51poa05i79ejy26uqjkjbl00", 2, "curl-a"}};
  EXPECT_EQ(
      encode_to_client(Encoding::kJson, err),
      R"({"body":{"tag":"Error","val":{"actionId":["$BigInt","3"],"actor":{"actorId":"dxls2p51poa05i79ejy26uqjkjbl00","generation":2,"key":"curl-a"},"code":"action_not_found","group":"actor","message":"Action `nope` was not found."}}})");
}

TEST(ToClient, ActorWithoutKeyOmitsIt) {
  // The client's schema has `key: z.string().optional()`: null would fail validation.
  const ErrorMessage err{"actor", "x", "y", std::nullopt, 1, ActorSpecifier{"id", 3, std::nullopt}};
  EXPECT_EQ(
      encode_to_client(Encoding::kJson, err),
      R"({"body":{"tag":"Error","val":{"actionId":["$BigInt","1"],"actor":{"actorId":"id","generation":3},"code":"x","group":"actor","message":"y"}}})");
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kBare, err)),
            "040001056163746f7201780179"
            "00"
            "0101"
            "0102696403"
            "00");
}

TEST(ToClient, UserValuesAreCompatTagged) {
  const Value output = Value::array({big("1"), Bytes{9, 8}, Undefined{}, Value::array({"$x", 1})});
  EXPECT_EQ(
      encode_to_client(Encoding::kJson, ActionResponse{2, output}),
      R"({"body":{"tag":"ActionResponse","val":{"id":["$BigInt","2"],"output":[["$BigInt","1"],["$Uint8Array","CQg="],null,["$$x",1]]}}})");
  // CBOR: compat arrays inside, and the id still a plain 8-byte integer.
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kCbor, ActionResponse{2, Value(big("1"))})),
            "a164626f6479a2637461676e416374696f6e526573706f6e73656376616ca26269641b000000000000"
            "0002666f7574707574826724426967496e746131");
  // BARE: the output is compat-CBOR.
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kBare, ActionResponse{2, Value(Undefined{})})),
            "040002"
            "02"
            "0d"
            "826a24556e646566696e656400");
}

TEST(ToClient, UndefinedOutputIsNullInJson) {
  // A void action: the TS client requires `output` (an absent one fails its schema and the call
  // never resolves), so JSON carries null, as rivetkit-core sends; nested undefined still follows
  // JSON.stringify.
  EXPECT_EQ(encode_to_client(Encoding::kJson, ActionResponse{0, Value(Undefined{})}),
            R"({"body":{"tag":"ActionResponse","val":{"id":["$BigInt","0"],"output":null}}})");
  EXPECT_EQ(encode_to_client(Encoding::kJson,
                             ActionResponse{0, Value::object({{"a", Value(Undefined{})}})}),
            R"({"body":{"tag":"ActionResponse","val":{"id":["$BigInt","0"],"output":{}}}})");
}

TEST(ToClient, LargeIds) {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(
      encode_to_client(Encoding::kJson, ActionResponse{max, Value(nullptr)}),
      R"({"body":{"tag":"ActionResponse","val":{"id":["$BigInt","18446744073709551615"],"output":null}}})");
  EXPECT_EQ(to_hex(encode_to_client(Encoding::kBare, ActionResponse{max, Value(nullptr)})),
            "040002ffffffffffffffffff0101f6");
  const std::string cbor =
      to_hex(encode_to_client(Encoding::kCbor, ActionResponse{max, Value(nullptr)}));
  EXPECT_NE(cbor.find("6269641bffffffffffffffff"), std::string::npos);
}

// ---- the client's side (connections between actors) -------------------------------------------

TEST(ClientSide, RequestsAreWrittenAsTheTsClientWritesThem) {
  const ToServer action = ActionRequest{0, "increment", {Value(3)}};
  const ToServer subscribe = SubscriptionRequest{"newCount", true};
  // §6.8's captured frames.
  EXPECT_EQ(
      encode_to_server(Encoding::kJson, action),
      R"({"body":{"tag":"ActionRequest","val":{"id":["$BigInt","0"],"name":"increment","args":[3]}}})");
  EXPECT_EQ(
      encode_to_server(Encoding::kJson, subscribe),
      R"({"body":{"tag":"SubscriptionRequest","val":{"eventName":"newCount","subscribe":true}}})");
  EXPECT_EQ(to_hex(encode_to_server(Encoding::kBare, action)),
            "0400000009696e6372656d656e74028103");
  EXPECT_EQ(to_hex(encode_to_server(Encoding::kBare, subscribe)), "040001086e6577436f756e7401");
  // What the server reads back, in every encoding, big ids and compat values included.
  for (auto e : {Encoding::kJson, Encoding::kCbor, Encoding::kBare}) {
    const ToServer big_one =
        ActionRequest{std::numeric_limits<std::uint64_t>::max(),
                      "a b",
                      {big("123456789012345678901234567890"), Value(Bytes{1, 2}), Value(nullptr)}};
    const auto back = action_ok(e, encode_to_server(e, big_one));
    EXPECT_EQ(back.id, std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(back.name, "a b");
    EXPECT_EQ(Value(back.args), Value(std::get<ActionRequest>(big_one).args));
    const auto sub = decode_ok(e, encode_to_server(e, ToServer{SubscriptionRequest{"x", false}}));
    ASSERT_TRUE(std::holds_alternative<SubscriptionRequest>(sub));
    EXPECT_EQ(std::get<SubscriptionRequest>(sub).event_name, "x");
    EXPECT_FALSE(std::get<SubscriptionRequest>(sub).subscribe);
  }
}

TEST(ClientSide, EveryServerFrameReadsBackAsWritten) {
  const std::vector<ToClient> frames = {
      Init{"actor-1", "conn-1"},
      ActionResponse{7, Value::object({{"n", big("99999999999999999999")}})},
      ActionResponse{8, Value(Undefined{})},
      Event{"newCount", {Value(8), Value("x")}},
      ErrorMessage{"user", "my_code", "no", Value::object({{"a", 1}}), 3,
                   ActorSpecifier{"actor-1", 2, std::string("k")}},
      ErrorMessage{"auth", "forbidden", "closed", std::nullopt, std::nullopt, std::nullopt},
  };
  for (auto e : {Encoding::kJson, Encoding::kCbor, Encoding::kBare}) {
    for (const auto& frame : frames) {
      const std::string bytes = encode_to_client(e, frame);
      auto back = decode_to_client(e, bytes);
      ASSERT_TRUE(back) << encoding_name(e) << ": " << back.error().message;
      EXPECT_EQ(encode_to_client(e, *back), bytes) << encoding_name(e);
    }
  }
  auto init = decode_to_client(Encoding::kJson, encode_to_client(Encoding::kJson, frames[0]));
  ASSERT_TRUE(init && std::holds_alternative<Init>(*init));
  EXPECT_EQ(std::get<Init>(*init).connection_id, "conn-1");
  auto error = decode_to_client(Encoding::kCbor, encode_to_client(Encoding::kCbor, frames[4]));
  ASSERT_TRUE(error && std::holds_alternative<ErrorMessage>(*error));
  EXPECT_EQ(std::get<ErrorMessage>(*error).action_id, 3u);
  EXPECT_EQ(std::get<ErrorMessage>(*error).metadata, Value::object({{"a", 1}}));
  EXPECT_FALSE(decode_to_client(Encoding::kJson, R"({"body":{"tag":"Nope","val":{}}})"));
  EXPECT_FALSE(decode_to_client(Encoding::kBare, from_hex("0400 | 09")));
  EXPECT_FALSE(decode_to_client(Encoding::kCbor, "\xff"));
}

}  // namespace
}  // namespace rivetkit::protocol::client
