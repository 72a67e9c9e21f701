#include "net/pipe_websocket.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <deque>
#include <mutex>

namespace rivetkit::net {

namespace {

namespace asio = boost::asio;

// The two directions and the close, on one strand.
struct Pipe {
  explicit Pipe(asio::any_io_executor ex)
      : strand(asio::make_strand(std::move(ex))),
        wake{asio::steady_timer(strand), asio::steady_timer(strand)} {}

  asio::strand<asio::any_io_executor> strand;
  std::deque<WsMessage> inbox[2];  // inbox[i]: what end i receives
  asio::steady_timer wake[2];      // an event, not a clock: cancelled when inbox[i] changes
  bool closed = false;
  WsCloseInfo info;
  mutable std::mutex mutex;  // guards `buffered` and `info` for the thread-safe getters
  std::size_t buffered[2] = {0, 0};

  void notify(int end) { wake[end].cancel(); }
  void close(std::uint16_t code, std::string reason) {
    if (closed) {
      return;
    }
    closed = true;
    {
      std::lock_guard lock(mutex);
      info = WsCloseInfo{code, std::move(reason)};
    }
    notify(0);
    notify(1);
  }
};

class PipeEnd final : public WebSocket {
 public:
  PipeEnd(std::shared_ptr<Pipe> pipe, int end) : pipe_(std::move(pipe)), end_(end) {}
  ~PipeEnd() override {
    // An end nobody holds any more is gone without a close frame.
    asio::post(pipe_->strand, [pipe = pipe_] { pipe->close(1006, ""); });
  }

  void send(WsMessage msg) override {
    const int peer = 1 - end_;
    {
      std::lock_guard lock(pipe_->mutex);
      pipe_->buffered[peer] += msg.data.size();
    }
    asio::post(pipe_->strand, [pipe = pipe_, peer, msg = std::move(msg)]() mutable {
      if (pipe->closed) {
        std::lock_guard lock(pipe->mutex);
        pipe->buffered[peer] -= msg.data.size();
        return;  // sends after a close are dropped
      }
      msg.index.reset();
      pipe->inbox[peer].push_back(std::move(msg));
      pipe->notify(peer);
    });
  }

  void close(std::uint16_t code, std::string reason) override {
    asio::post(pipe_->strand, [pipe = pipe_, code, reason = std::move(reason)]() mutable {
      pipe->close(code, std::move(reason));
    });
  }

  Task<std::optional<WsMessage>> receive() override {
    auto task = [](std::shared_ptr<Pipe> pipe, int end) -> Task<std::optional<WsMessage>> {
      while (pipe->inbox[end].empty() && !pipe->closed) {
        pipe->wake[end].expires_at(asio::steady_timer::time_point::max());
        co_await pipe->wake[end].async_wait(asio::as_tuple(asio::use_awaitable));
      }
      if (pipe->inbox[end].empty()) {
        co_return std::nullopt;
      }
      WsMessage msg = std::move(pipe->inbox[end].front());
      pipe->inbox[end].pop_front();
      {
        std::lock_guard lock(pipe->mutex);
        pipe->buffered[end] -= msg.data.size();
      }
      co_return std::move(msg);
    };
    auto op = asio::co_spawn(pipe_->strand, task(pipe_, end_), asio::use_awaitable);
    co_return co_await std::move(op);
  }

  WsCloseInfo close_info() const override {
    std::lock_guard lock(pipe_->mutex);
    return pipe_->info;
  }

  std::size_t buffered_bytes() const override {
    std::lock_guard lock(pipe_->mutex);
    return pipe_->buffered[1 - end_];
  }

 private:
  std::shared_ptr<Pipe> pipe_;
  int end_;
};

}  // namespace

std::pair<std::shared_ptr<WebSocket>, std::shared_ptr<WebSocket>> make_websocket_pipe(
    asio::any_io_executor ex) {
  auto pipe = std::make_shared<Pipe>(std::move(ex));
  return {std::make_shared<PipeEnd>(pipe, 0), std::make_shared<PipeEnd>(pipe, 1)};
}

}  // namespace rivetkit::net
