// The connections part alone, with a host whose write numbers the test moves: frames leave in
// order once their write is durable, a failed write closes what depended on it, a removed
// connection still delivers its last frames, events reach subscribed connect sockets only and
// never over the size limit, records round-trip through storage's form, changes reach a write
// once, and an unreadable record is deleted instead of restored.

#include "core/actor/connection_set.hpp"

#include "core/actor/stored_value.hpp"
#include "recording_socket.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

namespace client = protocol::client;
using Socket = testing::RecordingSocket;

class FakeHost final : public ConnectionSet::Host {
 public:
  int changes = 0;
  std::uint64_t seq = 0;
  std::uint64_t durable = 0;
  void connections_changed() override { ++changes; }
  std::uint64_t output_seq() override { return seq; }
  std::uint64_t durable_seq() const override { return durable; }
};

class ConnData final : public detail::UserConnData {
 public:
  explicit ConnData(Value s) : state(std::move(s)) {}
  Value state_to_value() const override { return state; }
  void state_from_value(const Value& v) override { state = v; }
  Value state;
};

class ConnectionSetTest : public ::testing::Test {
 protected:
  std::shared_ptr<Connection> open(ConnKind kind,
                                   client::Encoding encoding = client::Encoding::kJson,
                                   bool hibernatable = false) {
    auto socket = std::make_shared<Socket>();
    Request request;
    request.method = "GET";
    request.path = "/connect";
    auto conn = set.make("c" + std::to_string(++next_), kind, Value{"params"}, std::move(request),
                         encoding, socket);
    conn->set_hibernatable(hibernatable);
    sockets[conn->id()] = socket;
    set.add(conn);
    return conn;
  }
  Socket& socket_of(const Connection& conn) { return *sockets.at(conn.id()); }

  FakeHost host;
  ConnectionSet set{"actor-1", 256, host};
  std::map<std::string, std::shared_ptr<Socket>> sockets;
  int next_ = 0;
};

TEST_F(ConnectionSetTest, FramesLeaveInOrderOnceTheirWriteIsDurable) {
  auto conn = open(ConnKind::kActorConnect);
  host.seq = 1;
  set.send_frame(*conn, net::WsMessage{false, "a"});
  host.seq = 2;
  set.send_frame(*conn, net::WsMessage{false, "b"});
  EXPECT_TRUE(socket_of(*conn).sent.empty());

  set.release(1, 0);
  ASSERT_EQ(socket_of(*conn).sent.size(), 1u);
  EXPECT_EQ(socket_of(*conn).sent[0].data, "a");
  set.release(2, 0);
  ASSERT_EQ(socket_of(*conn).sent.size(), 2u);
  EXPECT_EQ(socket_of(*conn).sent[1].data, "b");
}

TEST_F(ConnectionSetTest, AFrameWithNothingToWaitForLeavesAtOnce) {
  auto conn = open(ConnKind::kActorConnect);
  host.seq = 3;
  host.durable = 3;
  set.send_frame(*conn, net::WsMessage{false, "now"});
  ASSERT_EQ(socket_of(*conn).sent.size(), 1u);
}

TEST_F(ConnectionSetTest, AFailedWriteDropsWhatDependedOnItAndClosesTheConnection) {
  auto conn = open(ConnKind::kActorConnect);
  auto other = open(ConnKind::kActorConnect);
  host.seq = 1;
  set.send_frame(*conn, net::WsMessage{false, "reply"});
  set.release(0, 1);
  EXPECT_TRUE(socket_of(*conn).sent.empty());
  ASSERT_TRUE(socket_of(*conn).closed);
  EXPECT_EQ(socket_of(*conn).closed->code, 1011);
  EXPECT_EQ(socket_of(*conn).closed->reason, "actor.state_save_failed");
  EXPECT_FALSE(socket_of(*other).closed);  // nothing of it depended on the failed write
}

TEST_F(ConnectionSetTest, ARemovedConnectionStillDeliversItsLastFrames) {
  auto conn = open(ConnKind::kActorConnect);
  host.seq = 1;
  set.send_frame(*conn, net::WsMessage{false, "last"});
  conn->close(1000, "bye");
  EXPECT_TRUE(set.remove(conn));
  EXPECT_FALSE(set.remove(conn));  // once
  EXPECT_EQ(set.find(conn->id()), nullptr);
  EXPECT_FALSE(socket_of(*conn).closed);  // the close waits behind the frame

  set.release(1, 0);
  ASSERT_EQ(socket_of(*conn).sent.size(), 1u);
  EXPECT_EQ(socket_of(*conn).sent[0].data, "last");
  ASSERT_TRUE(socket_of(*conn).closed);
  EXPECT_EQ(socket_of(*conn).closed->reason, "bye");
}

TEST_F(ConnectionSetTest, BroadcastReachesSubscribedConnectSocketsOnly) {
  auto json = open(ConnKind::kActorConnect, client::Encoding::kJson);
  auto cbor = open(ConnKind::kActorConnect, client::Encoding::kCbor);
  auto unsubscribed = open(ConnKind::kActorConnect);
  auto raw = open(ConnKind::kRawWebSocket);
  json->subscribe("tick");
  cbor->subscribe("tick");
  raw->subscribe("tick");

  set.broadcast("tick", Array{Value{1}});
  ASSERT_EQ(socket_of(*json).sent.size(), 1u);
  EXPECT_EQ(socket_of(*json).sent[0].data,
            client::encode_to_client(client::Encoding::kJson,
                                     client::ToClient{client::Event{"tick", Array{Value{1}}}}));
  EXPECT_FALSE(socket_of(*json).sent[0].binary);
  ASSERT_EQ(socket_of(*cbor).sent.size(), 1u);
  EXPECT_TRUE(socket_of(*cbor).sent[0].binary);
  EXPECT_TRUE(socket_of(*unsubscribed).sent.empty());
  EXPECT_TRUE(socket_of(*raw).sent.empty());
}

TEST_F(ConnectionSetTest, AnEventOverTheSizeLimitClosesTheConnectionInstead) {
  auto conn = open(ConnKind::kActorConnect);
  conn->subscribe("big");
  set.broadcast("big", Array{Value{std::string(1000, 'x')}});
  EXPECT_TRUE(socket_of(*conn).sent.empty());
  ASSERT_TRUE(socket_of(*conn).closed);
  EXPECT_EQ(socket_of(*conn).closed->reason, "message.outgoing_too_long");

  auto direct = open(ConnKind::kActorConnect);
  direct->send("big", Array{Value{std::string(1000, 'x')}});
  ASSERT_TRUE(socket_of(*direct).closed);
  EXPECT_EQ(socket_of(*direct).closed->code, 1011);
}

TEST_F(ConnectionSetTest, ChangesReachTheNextWriteOnce) {
  auto hib = open(ConnKind::kActorConnect, client::Encoding::kJson, true);
  auto plain = open(ConnKind::kRawWebSocket);
  const int before = host.changes;
  set.mark_dirty(plain->id());  // not stored: nothing to write
  EXPECT_EQ(host.changes, before);
  storage::ActorWrite nothing;
  set.take_changes(nothing);
  EXPECT_TRUE(nothing.empty());

  set.mark_dirty(hib->id());
  hib->subscribe("x");  // rewrites the same record
  EXPECT_GT(host.changes, before);
  storage::ActorWrite write;
  set.take_changes(write);
  ASSERT_EQ(write.conn_upserts.size(), 1u);
  EXPECT_EQ(write.conn_upserts[0].subscriptions, std::vector<std::string>{"x"});
  storage::ActorWrite again;
  set.take_changes(again);
  EXPECT_TRUE(again.empty());

  set.mark_dirty(hib->id());
  EXPECT_TRUE(set.remove(hib));
  storage::ActorWrite removal;
  set.take_changes(removal);
  EXPECT_TRUE(removal.conn_upserts.empty());
  EXPECT_EQ(removal.conn_deletes, std::vector<std::string>{hib->id()});
}

TEST_F(ConnectionSetTest, ARecordRestoresTheConnectionItWasTakenFrom) {
  auto socket = std::make_shared<Socket>();
  socket->point = net::WsResumePoint{"gw01rq01", 7, 3};
  Request request;
  request.method = "GET";
  request.path = "/connect";
  request.search = "?room=1";
  request.headers.push_back(HttpHeader{"x-user", "ann"});
  auto conn = set.make("conn-a", ConnKind::kActorConnect, Value{"p"}, request,
                       client::Encoding::kCbor, socket);
  conn->set_hibernatable(true);
  conn->set_user_data(std::make_unique<ConnData>(Value{42}));
  set.add(conn);
  conn->subscribe("ev");

  const auto record = set.record_of(*conn);
  EXPECT_EQ(record.kind, "connect");
  EXPECT_EQ(record.encoding, "cbor");
  EXPECT_EQ(record.request_path, "/connect?room=1");
  EXPECT_EQ(record.tunnel_id, "gw01rq01");
  EXPECT_EQ(record.client_message_index, 7);
  EXPECT_EQ(record.server_message_index, 3);

  detail::ActorHooks hooks;
  hooks.restore_conn_data = [](const Value& params, const Value& state) {
    EXPECT_EQ(params, Value{"p"});
    return std::make_unique<ConnData>(state);
  };
  ConnectionSet other{"actor-1", 256, host};
  auto restored = other.restore(record, nullptr, hooks);
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(restored->id(), "conn-a");
  EXPECT_EQ(restored->kind(), ConnKind::kActorConnect);
  EXPECT_EQ(restored->encoding(), client::Encoding::kCbor);
  EXPECT_TRUE(restored->is_hibernatable());
  EXPECT_TRUE(restored->subscribed("ev"));
  EXPECT_EQ(restored->request().path, "/connect");
  EXPECT_EQ(restored->request().search, "?room=1");
  ASSERT_EQ(restored->request().headers.size(), 1u);
  EXPECT_EQ(restored->request().headers[0].value, "ann");
  ASSERT_NE(restored->user_data(), nullptr);
  EXPECT_EQ(restored->user_data()->state_to_value(), Value{42});
  storage::ActorWrite nothing;
  other.take_changes(nothing);
  EXPECT_TRUE(nothing.empty()) << "restoring changes nothing stored";
}

TEST_F(ConnectionSetTest, AnUnreadableRecordIsDeletedInsteadOfRestored) {
  storage::PersistedConn record;
  record.conn_id = "broken";
  record.params = "\xff\xff";  // not CBOR
  record.state = encode_stored(Value{});
  detail::ActorHooks hooks;
  hooks.restore_conn_data = [](const Value&, const Value& state) {
    return std::make_unique<ConnData>(state);
  };
  EXPECT_EQ(set.restore(record, nullptr, hooks), nullptr);

  storage::PersistedConn refused = record;
  refused.conn_id = "refused";
  refused.params = encode_stored(Value{});
  hooks.restore_conn_data = [](const Value&, const Value&) -> std::unique_ptr<ConnData> {
    throw std::runtime_error("state no longer fits");
  };
  EXPECT_EQ(set.restore(refused, nullptr, hooks), nullptr);

  storage::ActorWrite write;
  set.take_changes(write);
  EXPECT_EQ(write.conn_deletes, (std::vector<std::string>{"broken", "refused"}));
}

TEST_F(ConnectionSetTest, WhatKeepsTheActorAwakeAndWhatAStopEnds) {
  auto hib = open(ConnKind::kActorConnect, client::Encoding::kJson, true);
  EXPECT_FALSE(set.keep_awake());
  auto http = open(ConnKind::kHttp);
  EXPECT_TRUE(set.keep_awake());
  auto raw = open(ConnKind::kRawWebSocket);

  auto on_sleep = set.ended_by_stop(false);
  ASSERT_EQ(on_sleep.size(), 1u);  // the raw socket; HTTP belongs to its request
  EXPECT_EQ(on_sleep[0], raw);
  EXPECT_EQ(set.ended_by_stop(true).size(), 2u);  // destroy: the hibernatable one too

  set.save_hibernating();
  storage::ActorWrite write;
  set.take_changes(write);
  ASSERT_EQ(write.conn_upserts.size(), 1u);
  EXPECT_EQ(write.conn_upserts[0].conn_id, hib->id());

  set.clear();
  EXPECT_TRUE(set.live().empty());
  EXPECT_EQ(hib->transport(), nullptr);  // the driver keeps the socket
  EXPECT_FALSE(socket_of(*hib).closed);
}

}  // namespace
}  // namespace rivetkit::core
