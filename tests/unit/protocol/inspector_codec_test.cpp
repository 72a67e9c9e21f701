// The inspector WebSocket codec (protocol/inspector) against bytes produced by the official
// rivetkit 2.3.19 package's serializer (`rivetkit/inspector/client`, TO_CLIENT_VERSIONED /
// TO_SERVER_VERSIONED, captured with Node). Where that package's own downgrade converters lose a
// message an older schema still has (queue messages in v2-v5, database answers in v3, Init in
// v2-v5), the expected bytes follow the schema of that version, as RivetKit's Rust runtime sends.

#include "protocol/inspector/inspector_messages.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rivetkit::protocol::inspector {
namespace {

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string unhex(std::string_view h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
  }
  return out;
}

Schedule tick() {
  Schedule s;
  s.id = "s1";
  s.kind = "at";
  s.action = "tick";
  s.args = std::string(1, '\x80');
  s.next_run_at = 1700000000000;
  return s;
}

TEST(InspectorCodecTest, InitIsWrittenAsEachVersionShapesIt) {
  Init init;
  init.connections = {Connection{"c1", std::string(1, '\xa0')}};
  init.state = unhex("a1616101");
  init.is_state_enabled = true;
  init.rpcs = {"a", "b"};
  init.queue_size = 3;
  init.schedules = {tick()};
  EXPECT_EQ(hex(encode_to_client(init, 1)), "090102633101a0000104a161610101020161016200");
  EXPECT_EQ(hex(encode_to_client(init, 6)),
            "110102633101a00104a161610101020161016200030000000102733100026174047469636b018080d095"
            "ffbc310000000000");
  // v2-v4: queue size and workflow fields, no tab config; v5: an empty tab config.
  EXPECT_EQ(hex(encode_to_client(init, 2)), "0c0102633101a00104a161610101020161016200030000");
  EXPECT_EQ(hex(encode_to_client(init, 5)), "0d0102633101a00104a16161010102016101620003000000");
}

TEST(InspectorCodecTest, MessagesCarryTheirTagOfEachVersion) {
  const ToClient state_updated = StateUpdated{unhex("0102")};
  EXPECT_EQ(hex(encode_to_client(state_updated, 1)), "07020102");
  for (std::uint16_t v = 2; v <= 6; ++v) {
    EXPECT_EQ(hex(encode_to_client(state_updated, v)), "05020102") << v;
  }
  const ToClient error = ErrorMessage{"boom"};
  const char* error_hex[] = {"",
                             "0804626f6f6d",
                             "0b04626f6f6d",
                             "0b04626f6f6d",
                             "0c04626f6f6d",
                             "0c04626f6f6d",
                             "1004626f6f6d"};
  for (std::uint16_t v = 1; v <= 6; ++v) {
    EXPECT_EQ(hex(encode_to_client(error, v)), error_hex[v]) << v;
  }
  const ToClient rpcs = RpcsListResponse{2, {"x"}};
  EXPECT_EQ(hex(encode_to_client(rpcs, 1)), "0402010178");
  EXPECT_EQ(hex(encode_to_client(rpcs, 5)), "0702010178");
  EXPECT_EQ(hex(encode_to_client(rpcs, 6)), "0802010178");
  const ToClient conns = ConnectionsUpdated{{Connection{"c", std::string(1, '\xf6')}}};
  EXPECT_EQ(hex(encode_to_client(conns, 1)), "0501016301f6");
  EXPECT_EQ(hex(encode_to_client(conns, 6)), "0301016301f6");
  const ToClient state_response = StateResponse{1, std::nullopt, false};
  EXPECT_EQ(hex(encode_to_client(state_response, 3)), "00010000");

  QueueResponse queue;
  queue.rid = 5;
  queue.size = 2;
  queue.max_size = 1000;
  queue.messages = {QueueMessageSummary{1, "jobs", 1700000000000}};
  queue.truncated = true;
  EXPECT_EQ(hex(encode_to_client(queue, 6)), "0a0502e8070101046a6f627380d095ffbc3101");
  EXPECT_EQ(hex(encode_to_client(queue, 5)), "090502e8070101046a6f627380d095ffbc3101");
  EXPECT_EQ(hex(encode_to_client(QueueUpdated{7}, 6)), "0407");
  EXPECT_EQ(hex(encode_to_client(QueueUpdated{7}, 2)), "0407");

  const ToClient schema = DatabaseSchemaResponse{9, std::string(1, '\xf6')};
  EXPECT_EQ(hex(encode_to_client(schema, 6)), "120901f6");
  EXPECT_EQ(hex(encode_to_client(schema, 5)), "0e0901f6");
  EXPECT_EQ(hex(encode_to_client(schema, 3)), "0d0901f6");
  const ToClient replay = WorkflowReplayResponse{4, std::nullopt, false};
  EXPECT_EQ(hex(encode_to_client(replay, 6)), "0c040000");
  EXPECT_EQ(hex(encode_to_client(replay, 4)), "0b040000");
  EXPECT_EQ(hex(encode_to_client(SchedulesResponse{3, {tick()}}, 6)),
            "0d030102733100026174047469636b018080d095ffbc310000000000");
}

TEST(InspectorCodecTest, WhatAVersionCannotCarryBecomesADroppedError) {
  EXPECT_EQ(hex(encode_to_client(QueueUpdated{7}, 1)),
            "0817696e73706563746f722e71756575655f64726f70706564");  // inspector.queue_dropped
  EXPECT_EQ(hex(encode_to_client(DatabaseSchemaResponse{9, "x"}, 1)),
            "081a696e73706563746f722e64617461626173655f64726f70706564");
  EXPECT_EQ(hex(encode_to_client(SchedulesResponse{3, {}}, 1)),
            "081b696e73706563746f722e7363686564756c65735f64726f70706564");
  EXPECT_EQ(hex(encode_to_client(WorkflowReplayResponse{4, std::nullopt, false}, 3)),
            "0b22696e73706563746f722e776f726b666c6f775f686973746f72795f64726f70706564");
  EXPECT_EQ(encode_to_client(SchedulesUpdated{}, 5),
            encode_to_client(ErrorMessage{"inspector.schedules_dropped"}, 5));
}

TEST(InspectorCodecTest, LegacyFramesCarryTheirVersionFirst) {
  EXPECT_EQ(hex(encode_to_client_embedded(ErrorMessage{"boom"}, 5)), "05000c04626f6f6d");
  auto decoded = decode_to_server_embedded(unhex("05000101"));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(std::get<StateRequest>(*decoded).id, 1u);
  EXPECT_FALSE(decode_to_server_embedded(unhex("05")));
  EXPECT_FALSE(decode_to_server_embedded(unhex("07000101"))) << "no version 7";
}

TEST(InspectorCodecTest, RequestsAreReadAsEachVersionTagsThem) {
  auto action = decode_to_server(unhex("030203696e63028105"), 6);
  ASSERT_TRUE(action);
  const auto& a = std::get<ActionRequest>(*action);
  EXPECT_EQ(a.id, 2u);
  EXPECT_EQ(a.name, "inc");
  EXPECT_EQ(hex(a.args), "8105");
  auto patch = decode_to_server(unhex("0001a0"), 1);
  ASSERT_TRUE(patch);
  EXPECT_EQ(hex(std::get<PatchStateRequest>(*patch).state), "a0");
  EXPECT_EQ(std::get<RpcsListRequest>(*decode_to_server(unhex("0603"), 1)).id, 3u);
  EXPECT_EQ(std::get<RpcsListRequest>(*decode_to_server(unhex("0403"), 2)).id, 3u);
  auto queue = decode_to_server(unhex("060432"), 6);
  ASSERT_TRUE(queue);
  EXPECT_EQ(std::get<QueueRequest>(*queue).limit, 50u);
  auto rows = decode_to_server(unhex("0a0501740a02"), 5);
  ASSERT_TRUE(rows);
  const auto& r = std::get<DatabaseTableRowsRequest>(*rows);
  EXPECT_EQ(r.table, "t");
  EXPECT_EQ(r.limit, 10u);
  EXPECT_EQ(r.offset, 2u);
  EXPECT_EQ(std::get<DatabaseTableRowsRequest>(*decode_to_server(unhex("090501740a02"), 3)).id, 5u);
  auto replay = decode_to_server(unhex("0806010165"), 4);
  ASSERT_TRUE(replay);
  EXPECT_EQ(std::get<WorkflowReplayRequest>(*replay).entry_id, "e");
  auto del = decode_to_server(unhex("0d07027331026174"), 6);
  ASSERT_TRUE(del);
  EXPECT_EQ(std::get<ScheduleDeleteRequest>(*del).schedule_id, "s1");
  EXPECT_EQ(std::get<ScheduleDeleteRequest>(*del).kind, "at");
}

TEST(InspectorCodecTest, MalformedRequestsAreErrorsNeverCrashes) {
  for (const char* bad : {"", "0d", "0d0702", "030203696e6302", "0101ff", "ff01", "0e01"}) {
    auto decoded = decode_to_server(unhex(bad), 6);
    ASSERT_FALSE(decoded) << bad;
    EXPECT_EQ(decoded.error().group, "inspector");
  }
  EXPECT_FALSE(decode_to_server(unhex("0401"), 1)) << "a v1 events request";
  EXPECT_FALSE(decode_to_server(unhex("0b01"), 5)) << "schedules need v6";
  EXPECT_FALSE(decode_to_server(unhex("0101"), 0));
  EXPECT_FALSE(decode_to_server(unhex("0101"), 7));
}

}  // namespace
}  // namespace rivetkit::protocol::inspector
