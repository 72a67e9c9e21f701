// The byte forms of the runtime's keys (storage/runtime_records.hpp): values round-trip, keys parse
// back to what made them, sort as the layout needs, and damaged bytes are refused.

#include "storage/runtime_records.hpp"

#include "protocol/bare/bare.hpp"

#include <gtest/gtest.h>

namespace rivetkit::storage::runtime_records {
namespace {

TEST(RuntimeRecordsTest, HeadsRoundTripInEveryStateForm) {
  Head none = owned_by(7);
  none.sealed = true;
  none.has_initialized = true;
  Head inline_state = owned_by(8);
  inline_state.form = StateForm::kInline;
  inline_state.inline_state = std::string("\0\x01state", 7);
  Head chunked = owned_by(9);
  chunked.has_initialized = true;
  chunked.form = StateForm::kChunked;
  chunked.slot = 1;
  chunked.chunks = 70;
  chunked.size = 8u << 20;
  chunked.indexes["c-1"] = MessageIndexes{65535, 0};
  chunked.indexes[std::string("\0\xff", 2)] = MessageIndexes{1, 2};
  for (const Head& h : {none, inline_state, chunked}) {
    auto back = decode_head(encode_head(h));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, h);
  }
}

TEST(RuntimeRecordsTest, ConnectionsAndSchedulesRoundTrip) {
  PersistedConn c;
  c.conn_id = "c-1";
  c.kind = "websocket";
  c.encoding = "cbor";
  c.params = std::string("\xa1\x61x\x01", 4);
  c.state = "s";
  c.subscriptions = {"a", "b"};
  c.request_path = "/ws?x=1";
  c.request_headers = "h";
  c.tunnel_id = "gatereq!";
  c.server_message_index = 65535;
  c.client_message_index = 3;
  // Version 1 kept the tunnel id as two ids (gateway, request): read as one.
  std::string v1;
  protocol::bare::Writer w(v1);
  w.u8(1);
  write_conn_fields(w, c, ConnLayout::kTwoIds);
  auto old = decode_conn(v1);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(old->tunnel_id, "gatereq!");
  EXPECT_EQ(encode_conn(*old), encode_conn(c));

  auto conn = decode_conn(encode_conn(c));
  ASSERT_TRUE(conn);
  EXPECT_EQ(encode_conn(*conn), encode_conn(c));
  EXPECT_EQ(conn->subscriptions, c.subscriptions);
  EXPECT_EQ(conn->server_message_index, 65535);

  PersistedSchedule s{"e-1", -5, "tick", std::string("\x80", 1), 42, 3};
  auto schedule = decode_schedule(encode_schedule(s));
  ASSERT_TRUE(schedule);
  EXPECT_EQ(schedule->event_id, "e-1");
  EXPECT_EQ(schedule->trigger_at, -5);
  EXPECT_EQ(schedule->args, s.args);
  EXPECT_EQ(schedule->attempts, 3u);
  s.args.reset();
  schedule = decode_schedule(encode_schedule(s));
  ASSERT_TRUE(schedule);
  EXPECT_FALSE(schedule->args.has_value());
}

TEST(RuntimeRecordsTest, DamagedValuesAreRefused) {
  Head h = owned_by(1);
  h.form = StateForm::kInline;
  h.inline_state = "abc";
  const std::string head = encode_head(h);
  EXPECT_FALSE(decode_head(head.substr(0, head.size() - 1)));
  EXPECT_FALSE(decode_head(head + "x"));
  EXPECT_FALSE(decode_head(std::string("\x03") + head.substr(1)));  // unknown version
  // Version 1 (fixed-width fields, no index table) is still read.
  auto v1 =
      decode_head(std::string("\x01\x07\0\0\0\x01\x01\x01\x03"
                              "abc",
                              12));
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->owner, 7u);
  EXPECT_TRUE(v1->sealed);
  EXPECT_EQ(v1->inline_state, "abc");
  EXPECT_TRUE(v1->indexes.empty());
  // Unknown flag bits.
  std::string bad_flags = head;
  bad_flags[1] = static_cast<char>(bad_flags[1] | 0x80);
  EXPECT_FALSE(decode_head(bad_flags));
  // Compact: a created actor's head is 4 bytes and its state.
  Head small = owned_by(0);
  small.has_initialized = true;
  small.form = StateForm::kInline;
  small.inline_state = std::string(9, 's');
  EXPECT_EQ(encode_head(small).size(), 4u + 9u);
  // A connection twice in the table.
  Head twice = owned_by(1);
  twice.indexes["a"] = MessageIndexes{1, 1};
  twice.indexes["b"] = MessageIndexes{2, 2};
  std::string dup = encode_head(twice);
  dup[dup.size() - 5] = 'a';
  EXPECT_FALSE(decode_head(dup));
  std::string bad_form = head;
  bad_form[1] = static_cast<char>(bad_form[1] | 0x0c);  // form 3
  EXPECT_FALSE(decode_head(bad_form));
  const std::string conn = encode_conn(PersistedConn{});
  EXPECT_FALSE(decode_conn(conn.substr(0, conn.size() - 1)));
  EXPECT_FALSE(decode_schedule(""));
  EXPECT_EQ(decode_head("").error().code, "corrupt_record");
}

TEST(RuntimeRecordsTest, KeysParseBackAndSortByEpochThenKind) {
  auto c = parse_record_key(conn_key(0x01020304, "conn"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->epoch, 0x01020304u);
  EXPECT_EQ(c->kind, kConn);
  EXPECT_EQ(c->id, "conn");
  auto h = parse_record_key(head_key(5));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->kind, kHead);
  EXPECT_FALSE(parse_record_key(head_key(5) + "x"));                     // a head has no id
  EXPECT_EQ(parse_record_key(conn_key(5, ""))->kind, kConn);             // an empty id is one
  EXPECT_FALSE(parse_record_key(chunk_key(5, 0, 0)));                    // chunks are not records
  EXPECT_FALSE(parse_record_key(std::string("\x01\0\0\0\x01\0\0", 7)));  // the old record
  // Epochs in order, every record before every chunk, and the ranges cover what they say.
  EXPECT_LT(schedule_key(1, "zzz"), head_key(2));
  EXPECT_LT(conn_key(0xffffffff, "z"), chunk_key(0, 0, 0));
  auto [rs, re] = all_records();
  EXPECT_LE(rs, head_key(0));
  EXPECT_LT(conn_key(0xffffffff, std::string(100, '\xff')), re);
  auto [bs, be] = records_before(3);
  EXPECT_LE(bs, conn_key(2, "x"));
  EXPECT_LT(conn_key(2, std::string(10, '\xff')), be);
  EXPECT_LE(be, head_key(3));
  auto [ss, se] = slot_chunks(4, 1, 2);
  EXPECT_EQ(ss, chunk_key(4, 1, 2));
  EXPECT_LT(chunk_key(4, 1, 0xffffffff), se);
  EXPECT_LE(se, chunk_key(4, 2, 0));
  EXPECT_GT(chunk_key(4, 0, 9), chunks_before(4).first);
  EXPECT_LE(chunks_before(4).second, chunk_key(4, 0, 0));
  EXPECT_LT(chunk_key(3, 1, 9), chunks_before(4).second);
}

}  // namespace
}  // namespace rivetkit::storage::runtime_records
