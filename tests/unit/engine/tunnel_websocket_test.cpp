// When a hibernatable tunnelled WebSocket acknowledges inbound messages to the gateway
// (TunnelWebSocket, envoy-protocol.md §4.11): only durable indexes, cumulatively, at most one
// acknowledgement per interval unless much inbound data waits. The link is the real one, talking
// to a scripted engine over loopback that records every tunnel message it receives; the checks
// look only at which acknowledgements arrived, never at how long they took.

#include "engine/tunnel_websocket.hpp"

#include "scripted_engine.hpp"
#include "util/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace rivetkit::engine {
namespace {

namespace asio = boost::asio;

class IgnoringHandler final : public EnvoyLinkHandler {
 public:
  void on_commands(std::vector<envoy::CommandWrapper>) override {}
  void on_tunnel(envoy::ToEnvoyTunnelMessage) override {}
  void on_lost() override {}
  void on_evicted() override {}
};

constexpr envoy::ProtocolMetadata kMetadata{9'000, 60'000, 20u << 20};

class TunnelWebSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log::init();
    engine_ = std::make_unique<ScriptedEngine>(kMetadata);
    EnvoyLinkOptions options;
    options.endpoint = engine_->endpoint();
    options.envoy_key = "tunnel-websocket-test";
    link_ = std::make_shared<EnvoyLink>(io_.get_executor(), std::move(options));
    link_->start(&handler_);
    thread_ = std::thread([this] { io_.run(); });
    auto fut = asio::co_spawn(io_, link_->wait_connected(std::chrono::milliseconds(60'000)),
                              asio::use_future);
    ASSERT_EQ(fut.wait_for(kWaitLimit), std::future_status::ready);
    auto connected = fut.get();
    ASSERT_TRUE(connected) << connected.error().message;
    socket_ = std::make_shared<TunnelWebSocket>(link_, envoy::GatewayId{1, 2, 3, 4},
                                                envoy::RequestId{5, 6, 7, 8}, true);
    on_strand([this] { socket_->open(); });
  }
  void TearDown() override {
    socket_.reset();
    link_->stop();
    work_.reset();
    io_.stop();
    thread_.join();
    link_.reset();
    engine_.reset();
  }

  /// Runs `fn` on the link's strand (where the driver calls the socket) and waits for it.
  void on_strand(std::function<void()> fn) {
    std::promise<void> done;
    asio::post(link_->strand(), [&] {
      fn();
      done.set_value();
    });
    ASSERT_EQ(done.get_future().wait_for(kWaitLimit), std::future_status::ready);
  }

  void deliver(envoy::MessageIndex index, std::size_t bytes) {
    socket_->on_message(index, net::WsMessage{true, std::string(bytes, 'x')});
  }

  /// The indexes of the acknowledgements the engine received, in order.
  std::vector<envoy::MessageIndex> acks() {
    std::vector<envoy::MessageIndex> out;
    for (const auto& m : engine_->tunnel_messages()) {
      if (auto* ack = std::get_if<envoy::ToRivetWebSocketMessageAck>(&m.message_kind)) {
        out.push_back(ack->index);
      }
    }
    return out;
  }
  bool acked_up_to(envoy::MessageIndex index) {
    return eventually([&] {
      auto a = acks();
      return !a.empty() && a.back() == index;
    });
  }

  std::unique_ptr<ScriptedEngine> engine_;
  IgnoringHandler handler_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::thread thread_;
  std::shared_ptr<EnvoyLink> link_;
  std::shared_ptr<TunnelWebSocket> socket_;
};

TEST_F(TunnelWebSocketTest, DurableIndexesInOneIntervalBecomeOneCumulativeAcknowledgement) {
  on_strand([this] {
    for (envoy::MessageIndex i = 1; i <= 5; ++i) {
      deliver(i, 10);
    }
    socket_->ack_durable(1);  // the first: sent at once
    socket_->ack_durable(2);  // the rest, in the same interval: one acknowledgement of 5
    socket_->ack_durable(4);
    socket_->ack_durable(5);
    socket_->ack_durable(3);  // older than what is durable already: nothing
  });
  EXPECT_EQ(socket_->acked_index(), 5) << "what is durable is known at once";
  ASSERT_TRUE(acked_up_to(5));
  EXPECT_EQ(acks(), (std::vector<envoy::MessageIndex>{1, 5}));
}

TEST_F(TunnelWebSocketTest, AnInboundBacklogIsAcknowledgedWithoutWaitingForTheInterval) {
  on_strand([this] {
    deliver(1, 10);
    socket_->ack_durable(1);
    deliver(2, 600'000);      // more than the gateway should buffer for a quarter of a second
    socket_->ack_durable(2);  // so this one goes at once
    deliver(3, 10);
    socket_->ack_durable(3);  // and this one waits for the interval again
  });
  ASSERT_TRUE(acked_up_to(3));
  EXPECT_EQ(acks(), (std::vector<envoy::MessageIndex>{1, 2, 3}));
}

}  // namespace
}  // namespace rivetkit::engine
