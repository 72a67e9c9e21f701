// The in-memory WebSocket pair (net/pipe_websocket.hpp): frames arrive in order at the other end;
// a close from either end ends both after what was sent before it, with the same code and
// reason; sends after it are dropped; an end dropped without a close ends the other with 1006;
// buffered_bytes counts what the other end has not taken yet.

#include "net/pipe_websocket.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rivetkit::net {
namespace {

namespace asio = boost::asio;

class PipeWebSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    thread_.join();
  }

  std::optional<WsMessage> receive(const std::shared_ptr<WebSocket>& ws) {
    auto fut = asio::co_spawn(io_, ws->receive(), asio::use_future);
    if (fut.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
      throw std::runtime_error("receive did not finish in time");
    }
    return fut.get();
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(io_)};
  std::thread thread_;
};

TEST_F(PipeWebSocketTest, FramesArriveInOrderBothWays) {
  auto [a, b] = make_websocket_pipe(io_.get_executor());
  a->send(WsMessage{false, "one"});
  a->send(WsMessage{true, "two"});
  b->send(WsMessage{false, "back"});
  auto first = receive(b);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->data, "one");
  EXPECT_FALSE(first->binary);
  auto second = receive(b);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->data, "two");
  EXPECT_TRUE(second->binary);
  auto back = receive(a);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->data, "back");
}

TEST_F(PipeWebSocketTest, ACloseEndsBothEndsAfterWhatWasSentBeforeIt) {
  auto [a, b] = make_websocket_pipe(io_.get_executor());
  a->send(WsMessage{false, "last words"});
  a->close(1011, "actor.gone");
  a->send(WsMessage{false, "dropped"});
  b->send(WsMessage{false, "dropped too"});
  auto got = receive(b);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->data, "last words");
  EXPECT_FALSE(receive(b));
  EXPECT_FALSE(receive(a));
  EXPECT_EQ(b->close_info().code, 1011);
  EXPECT_EQ(b->close_info().reason, "actor.gone");
  EXPECT_EQ(a->close_info().code, 1011);
}

TEST_F(PipeWebSocketTest, AWaitingReceiveEndsAtTheOtherEndsClose) {
  auto [a, b] = make_websocket_pipe(io_.get_executor());
  auto fut = asio::co_spawn(io_, b->receive(), asio::use_future);
  a->close(1000, "Disposed");
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_FALSE(fut.get());
  EXPECT_EQ(b->close_info().reason, "Disposed");
}

TEST_F(PipeWebSocketTest, AnEndDroppedWithoutACloseEndsTheOtherAbnormally) {
  auto [a, b] = make_websocket_pipe(io_.get_executor());
  a.reset();
  EXPECT_FALSE(receive(b));
  EXPECT_EQ(b->close_info().code, 1006);
}

TEST_F(PipeWebSocketTest, BufferedBytesCountWhatTheOtherEndHasNotTaken) {
  auto [a, b] = make_websocket_pipe(io_.get_executor());
  a->send(WsMessage{true, std::string(100, 'x')});
  a->send(WsMessage{true, std::string(20, 'y')});
  EXPECT_EQ(a->buffered_bytes(), 120u);
  EXPECT_EQ(b->buffered_bytes(), 0u);
  ASSERT_TRUE(receive(b));
  EXPECT_EQ(a->buffered_bytes(), 20u);
}

}  // namespace
}  // namespace rivetkit::net
