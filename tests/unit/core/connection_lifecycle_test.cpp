// The connection flows alone, on a manual clock, with hooks that record what ran: the preamble
// and on_connect in order, a refused or failed connect leaves nothing behind and gets no
// on_disconnect, ending from both sides at once runs the close handler and on_disconnect once,
// raw socket messages reach their handler and are acknowledged, a stopping actor takes nothing
// new, and a wake restores live sockets while the gone ones get their on_disconnect.

#include "core/actor/connection_lifecycle.hpp"

#include "core/actor/hook_runner.hpp"
#include "core/actor/stored_value.hpp"
#include "no_client.hpp"
#include "recording_socket.hpp"
#include <rivetkit/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
namespace client = protocol::client;
using Socket = testing::RecordingSocket;

class ConnData final : public detail::UserConnData {
 public:
  Value state_to_value() const override { return Value{}; }
  void state_from_value(const Value&) override {}
};

class SetHost final : public ConnectionSet::Host {
 public:
  void connections_changed() override {}
  std::uint64_t output_seq() override { return 0; }
  std::uint64_t durable_seq() const override { return 0; }
};

class Driver final : public ActorDriver {
 public:
  std::map<std::string, std::shared_ptr<net::WebSocket>> kept;
  void request_sleep(const std::string&) override {}
  void request_destroy(const std::string&) override {}
  void alarm_changed(const std::string&, std::optional<std::int64_t>) override {}
  std::shared_ptr<net::WebSocket> hibernated_socket(const storage::PersistedConn& r) override {
    auto it = kept.find(r.conn_id);
    return it == kept.end() ? nullptr : it->second;
  }
  Task<Result<void>> wake(std::string) override { co_return Result<void>{}; }
  Task<Result<std::unique_ptr<storage::ActorStore>>> storage_for(std::string,
                                                                 std::uint32_t) override {
    // These tests build no instance, so nothing asks where one keeps its data.
    co_return fail(Error{"test", "no_storage", "no instance starts here", std::nullopt, false});
  }
  detail::ClientApi& actor_client() override { return client; }
  testing::NoClient client;
};

class ConnectionLifecycleTest : public ::testing::Test, public ConnectionLifecycle::Host {
 protected:
  ConnectionLifecycleTest() {
    auto& h = definition.hooks;
    h.on_before_connect = [this](detail::ActorApi*, Value params, const Request*) -> Task<void> {
      ran.push_back("onBeforeConnect");
      if (params == Value{"deny"}) {
        throw UserError("not allowed", "forbidden");
      }
      co_return;
    };
    h.create_conn_data = [this](detail::ActorApi*, Value,
                                const Request*) -> Task<std::unique_ptr<detail::UserConnData>> {
      ran.push_back("createConnState");
      co_return std::make_unique<ConnData>();
    };
    h.on_connect = [this](detail::ActorApi*, detail::ConnApi* conn) -> Task<void> {
      ran.push_back("onConnect");
      if (conn->params() == Value{"fail-connect"}) {
        throw UserError("no", "connect_failed");
      }
      co_return;
    };
    h.on_disconnect = [this](detail::ActorApi*, detail::ConnApi* conn) -> Task<void> {
      ran.push_back("onDisconnect:" + conn->id());
      co_return;
    };
    h.on_websocket = [this](detail::ActorApi*, detail::ConnApi*, WebSocket ws) -> Task<void> {
      ran.push_back(ws.restored() ? "onWebSocket:restored" : "onWebSocket");
      ws.on_message([this](WebSocketMessage m) -> Task<void> {
        ran.push_back("message:" + m.data);
        if (m.data == "bad") {
          throw std::runtime_error("handler bug");
        }
        co_return;
      });
      ws.on_close([this](std::uint16_t code, std::string) -> Task<void> {
        ran.push_back("close:" + std::to_string(code));
        auto op = clock.wait_for(std::chrono::milliseconds(100));  // an async close handler
        co_await std::move(op);
      });
      co_return;
    };
    h.restore_conn_data = [](const Value&, const Value&) {
      return std::make_unique<ConnData>();
    };
    lifecycle.start_completed();
  }

  // ConnectionLifecycle::Host
  detail::ActorApi* hooks_target() override { return nullptr; }
  std::shared_ptr<void> hold() override { return owner; }
  Task<Result<void>> run_hook(const char* what,
                              Task<void> task,
                              std::chrono::milliseconds limit) override {
    return core::run_hook(clock, "actor-1", what, std::move(task), limit);
  }
  void message_taken(const Connection& conn, std::size_t bytes) override {
    taken.push_back(conn.id() + ":" + std::to_string(bytes));
  }

  template <class T>
  T run(Task<T> task) {
    std::optional<T> out;
    asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
      if (e) {
        std::rethrow_exception(e);
      }
      out = std::move(value);
    });
    settle();
    EXPECT_TRUE(out.has_value());
    return std::move(*out);
  }
  void run_void(Task<void> task) {
    asio::co_spawn(io, std::move(task), [](std::exception_ptr e) {
      if (e) {
        std::rethrow_exception(e);
      }
    });
  }
  void settle() {
    for (int i = 0; i < 10; ++i) {
      io.restart();
      io.poll();
    }
  }
  std::shared_ptr<Connection> open(ConnKind kind, Value params, std::shared_ptr<Socket> socket) {
    auto r = run(life.open(kind, std::move(params), Request{}, client::Encoding::kJson, socket));
    return r ? *r : nullptr;
  }

  asio::io_context io;
  util::ManualClock clock;
  detail::ActorDefinitionData definition;
  Lifecycle lifecycle{io.get_executor()};
  SleepGates sleep{io.get_executor(), clock, std::chrono::seconds(30), std::chrono::seconds(0)};
  SetHost set_host;
  ConnectionSet set{"actor-1", 1 << 20, set_host};
  ConnectionLifecycle life{io.get_executor(), "actor-1", definition, lifecycle, sleep, set, *this};
  std::shared_ptr<int> owner = std::make_shared<int>(0);
  std::vector<std::string> ran;
  std::vector<std::string> taken;
};

TEST_F(ConnectionLifecycleTest, OpeningRunsThePreambleThenConnect) {
  auto conn = open(ConnKind::kActorConnect, Value{"ok"}, std::make_shared<Socket>());
  ASSERT_NE(conn, nullptr);
  EXPECT_EQ(ran, (std::vector<std::string>{"onBeforeConnect", "createConnState", "onConnect"}));
  EXPECT_EQ(set.find(conn->id()), conn);
  EXPECT_TRUE(conn->is_hibernatable());  // connect sockets survive sleep
  EXPECT_NE(conn->user_data(), nullptr);
}

TEST_F(ConnectionLifecycleTest, ARefusedOrFailedConnectLeavesNothingAndGetsNoDisconnect) {
  auto refused = run(life.open(ConnKind::kActorConnect, Value{"deny"}, Request{},
                               client::Encoding::kJson, std::make_shared<Socket>()));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "forbidden");
  EXPECT_EQ(ran, std::vector<std::string>{"onBeforeConnect"});

  auto failed = run(life.open(ConnKind::kActorConnect, Value{"fail-connect"}, Request{},
                              client::Encoding::kJson, std::make_shared<Socket>()));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, "connect_failed");
  EXPECT_TRUE(set.live().empty());
  settle();
  for (const auto& hook : ran) {
    EXPECT_EQ(hook.rfind("onDisconnect", 0), std::string::npos) << hook;
  }
}

TEST_F(ConnectionLifecycleTest, EndingFromBothSidesRunsTheCloseHandlerAndDisconnectOnce) {
  auto socket = std::make_shared<Socket>();
  auto conn = open(ConnKind::kRawWebSocket, Value{}, socket);
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(run(life.attach_raw(conn, false)));
  ran.clear();

  run_void(life.end(conn, 1000, "bye"));
  settle();  // the actor's end is under way: its close handler waits
  EXPECT_EQ(ran, std::vector<std::string>{"close:1000"});
  std::optional<bool> found;  // the client's close arrives meanwhile
  asio::co_spawn(io, life.socket_closed(conn->id(), 1001, "client left"),
                 [&](std::exception_ptr e, bool f) {
                   if (e) {
                     std::rethrow_exception(e);
                   }
                   found = f;
                 });
  settle();
  EXPECT_EQ(found, std::optional<bool>(true)) << "it met the connection still ending";
  clock.advance(std::chrono::milliseconds(100));
  settle();
  EXPECT_EQ(ran, (std::vector<std::string>{"close:1000", "onDisconnect:" + conn->id()}));
  ASSERT_TRUE(socket->closed);
  EXPECT_EQ(socket->closed->code, 1000);
  EXPECT_TRUE(set.live().empty());
  EXPECT_FALSE(run(life.socket_closed(conn->id(), 1001, "again")));  // gone by now
}

TEST_F(ConnectionLifecycleTest, SubscriptionsFollowTheEventsRules) {
  // `open` has no rule; `slow` admits after a wait; `closed` refuses; `broken` throws.
  definition.events["open"];
  definition.events["slow"].can_subscribe = [this](detail::ActorApi*,
                                                   detail::ConnApi*) -> Task<bool> {
    auto op = clock.wait_for(std::chrono::milliseconds(50));
    co_await std::move(op);
    co_return true;
  };
  definition.events["closed"].can_subscribe = [](detail::ActorApi*,
                                                 detail::ConnApi*) -> Task<bool> {
    co_return false;
  };
  definition.events["broken"].can_subscribe = [](detail::ActorApi*,
                                                 detail::ConnApi*) -> Task<bool> {
    throw UserError("the rule broke", "rule_failed");
  };
  auto socket = std::make_shared<Socket>();
  auto conn = open(ConnKind::kActorConnect, Value{}, socket);
  ASSERT_NE(conn, nullptr);

  // Without a rule (declared or not), at once (no time passes).
  run_void(life.subscription(conn, "open", true));
  run_void(life.subscription(conn, "undeclared", true));
  settle();
  EXPECT_TRUE(conn->subscribed("open"));
  EXPECT_TRUE(conn->subscribed("undeclared"));
  run_void(life.subscription(conn, "open", false));
  settle();
  EXPECT_FALSE(conn->subscribed("open"));

  // A rule is awaited; the subscription applies once it said yes.
  bool done = false;
  asio::co_spawn(io, life.subscription(conn, "slow", true),
                 [&](std::exception_ptr) { done = true; });
  settle();
  EXPECT_FALSE(done);
  EXPECT_FALSE(conn->subscribed("slow"));
  clock.advance(std::chrono::milliseconds(50));
  settle();
  EXPECT_TRUE(done);
  EXPECT_TRUE(conn->subscribed("slow"));
  EXPECT_FALSE(socket->closed);

  // A refusal ends the connection with auth.forbidden.
  run_void(life.subscription(conn, "closed", true));
  settle();
  EXPECT_FALSE(conn->subscribed("closed"));
  ASSERT_TRUE(socket->closed);
  EXPECT_EQ(socket->closed->code, 1011);
  EXPECT_EQ(socket->closed->reason, "auth.forbidden");
  EXPECT_TRUE(set.live().empty());
  EXPECT_EQ(ran.back(), "onDisconnect:" + conn->id());

  // A rule that throws ends it with the rule's own (public) error.
  auto other_socket = std::make_shared<Socket>();
  auto other = open(ConnKind::kActorConnect, Value{}, other_socket);
  ASSERT_NE(other, nullptr);
  run_void(life.subscription(other, "broken", true));
  settle();
  ASSERT_TRUE(other_socket->closed);
  EXPECT_EQ(other_socket->closed->code, 1011);
  EXPECT_EQ(other_socket->closed->reason, "user.rule_failed");
}

TEST_F(ConnectionLifecycleTest, RawMessagesReachTheirHandlerAndAreTaken) {
  auto socket = std::make_shared<Socket>();
  auto conn = open(ConnKind::kRawWebSocket, Value{}, socket);
  ASSERT_TRUE(run(life.attach_raw(conn, false)));

  EXPECT_EQ(run(life.deliver_raw(conn->id(), net::WsMessage{false, "hello"})),
            ConnectionLifecycle::Delivery::kAccepted);
  EXPECT_EQ(taken, std::vector<std::string>{conn->id() + ":5"});
  EXPECT_EQ(ran.back(), "message:hello");

  EXPECT_EQ(run(life.deliver_raw(conn->id(), net::WsMessage{false, "bad"})),
            ConnectionLifecycle::Delivery::kAccepted);
  ASSERT_TRUE(socket->closed);  // a throwing handler closes its socket
  EXPECT_EQ(socket->closed->code, 1011);

  EXPECT_EQ(run(life.deliver_raw("nobody", net::WsMessage{false, "x"})),
            ConnectionLifecycle::Delivery::kGone);
}

TEST_F(ConnectionLifecycleTest, AStoppingActorTakesNothingNew) {
  auto conn = open(ConnKind::kRawWebSocket, Value{}, std::make_shared<Socket>());
  ASSERT_TRUE(run(life.attach_raw(conn, false)));
  lifecycle.request_stop();
  auto refused = run(life.open(ConnKind::kActorConnect, Value{}, Request{}, client::Encoding::kJson,
                               std::make_shared<Socket>()));
  ASSERT_TRUE(refused);
  EXPECT_EQ(*refused, nullptr);  // refused as stopping: for the next instance
  EXPECT_EQ(run(life.deliver_raw(conn->id(), net::WsMessage{false, "late"})),
            ConnectionLifecycle::Delivery::kRetry);
}

TEST_F(ConnectionLifecycleTest, AWakeRestoresLiveSocketsAndDisconnectsTheGoneOnes) {
  auto record = [](std::string id, std::string kind) {
    storage::PersistedConn r;
    r.conn_id = std::move(id);
    r.kind = std::move(kind);
    r.encoding = "json";
    r.params = encode_stored(Value{});
    r.state = encode_stored(Value{});
    r.request_headers = encode_stored(Value{Object{}});
    return r;
  };
  Driver driver;
  auto live_socket = std::make_shared<Socket>();
  driver.kept["live"] = live_socket;
  life.restore({record("gone", "connect"), record("live", "websocket")}, &driver);
  EXPECT_EQ(set.live().size(), 2u);
  settle();
  EXPECT_EQ(ran, std::vector<std::string>{"onWebSocket:restored"});  // no connection hooks

  life.reap_stale();
  settle();
  EXPECT_EQ(ran.back(), "onDisconnect:gone");
  ASSERT_EQ(set.live().size(), 1u);
  EXPECT_EQ(set.live().begin()->first, "live");
  EXPECT_EQ(set.find("live")->transport(), live_socket);
}

}  // namespace
}  // namespace rivetkit::core
