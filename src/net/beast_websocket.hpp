#pragma once
// BeastWebSocket<Stream>: the WebSocket contract (net/websocket.hpp) over a Beast websocket
// stream. INTERNAL to src/net and Beast-heavy: include it only from the .cpp files that
// instantiate it (websocket.cpp for the plain server socket; later the engine client's TU for
// the TLS client socket). Everything here is role-agnostic, so a client-side stream reuses the
// same send queue and receive path once its handshake is done.
//
// Design:
// - Every operation on the Beast stream runs on the stream's executor, which must be a strand
//   (the connection's strand). Beast allows one read and one write (or close) in flight at once.
// - send()/close() may be called from any thread: they post to the strand. A single writer
//   coroutine drains the queue in order, then sends the close frame if one was requested.
// - receive() runs one read on the strand (co_spawn onto it) and resumes the caller on the
//   caller's own executor. It has a single consumer. Do not cancel a pending receive() (Beast
//   leaves the stream unusable after a cancelled read); call close() instead, which makes it
//   return nullopt once the closing handshake ends.
// - Before the socket ended, close_info() is {1005, ""} (no meaning yet).
// - close_info is written once (first reason wins) and read under a mutex.
//
// Close codes reported by close_info():
// - our own close(code, reason): that code and reason (as sent);
// - the peer's close frame: its code and reason, 1005 if it carried no code;
// - a message larger than read_message_max: 1009 (Beast sends the close frame itself);
// - invalid UTF-8 in a text frame: 1007; other protocol violations: 1002 (Beast closes);
// - the TCP connection ended without a close frame (EOF, reset, timeout): 1006.
// - a peer close frame whose code may not be sent (above 4999: Beast accepts those and would
//   echo them): answered and reported as 1002 (CloseEchoGuard below). Beast itself fails the
//   other invalid codes (1004-1006, 1014-2999, <1000) with 1002.

#include "net/websocket.hpp"
#include "util/log.hpp"
#include "util/metrics.hpp"
#include "util/spawn.hpp"
#include <rivetkit/task.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/error.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace rivetkit::net::detail {

/// Longest close reason that fits a close frame (125-byte control payload minus the code).
inline constexpr std::size_t kMaxCloseReasonBytes = 123;

/// Cuts `reason` to at most `max` bytes without splitting a UTF-8 sequence (a peer fails the
/// connection on an invalid UTF-8 close reason).
std::string truncate_utf8(std::string reason, std::size_t max);

/// The code actually put on the wire for close(code): codes that must not be sent (1004-1006,
/// 1015, 1016-2999 reserved, <1000, >4999) become 1011; 1005 means "send no code".
std::uint16_t sendable_close_code(std::uint16_t code);

/// Maps the error that ended a read to the close code reported by close_info().
std::uint16_t close_code_for_read_error(const boost::system::error_code& ec);

/// Beast timeouts for an established socket: handshake/close-handshake bounded, no idle timeout
/// and no keep-alive pings (RivetKit sends none; client-protocol.md §6.8).
inline boost::beast::websocket::stream_base::timeout ws_timeouts(
    std::chrono::steady_clock::duration handshake_timeout) {
  boost::beast::websocket::stream_base::timeout t{};
  t.handshake_timeout = handshake_timeout;
  t.idle_timeout = boost::beast::websocket::stream_base::none();
  t.keep_alive_pings = false;
  return t;
}

/// A pass-through stream layer under the Beast websocket stream whose only job is to change the
/// close frame Beast echoes. Beast validates a received close code against RFC 6455 except
/// above 4999, which it accepts and echoes back as is; the control callback (installed by
/// BeastWebSocket) sees such a code before the echo is written and asks this layer to put
/// 1002 (protocol error) in the echo instead. The echo is Beast's own 2-byte-payload close
/// frame, unmasked from a server (4 bytes) or masked from a client (8 bytes).
template <class NextLayer>
class CloseEchoGuard {
 public:
  using executor_type = typename NextLayer::executor_type;
  using next_layer_type = NextLayer;

  template <class... Args>
  explicit CloseEchoGuard(Args&&... args) : next_(std::forward<Args>(args)...) {}

  executor_type get_executor() noexcept { return next_.get_executor(); }
  NextLayer& next_layer() noexcept { return next_; }
  const NextLayer& next_layer() const noexcept { return next_; }

  /// The next close frame written (the echo) carries `code`. Strand only.
  void replace_close_echo(std::uint16_t code) { replace_ = code; }

  template <class MutableBufferSequence, class ReadToken>
  auto async_read_some(const MutableBufferSequence& buffers, ReadToken&& token) {
    return next_.async_read_some(buffers, std::forward<ReadToken>(token));
  }

  template <class ConstBufferSequence, class WriteToken>
  auto async_write_some(const ConstBufferSequence& buffers, WriteToken&& token) {
    if ((replace_ || frame_size_ != 0)
        && boost::asio::buffer_sequence_begin(buffers)
               != boost::asio::buffer_sequence_end(buffers)) {
      const boost::asio::const_buffer first = *boost::asio::buffer_sequence_begin(buffers);
      const auto* p = static_cast<const unsigned char*>(first.data());
      if (replace_ && first.size() >= 2 && p[0] == 0x88u && (p[1] == 0x02u || p[1] == 0x82u)
          && first.size() >= (p[1] == 0x82u ? 8u : 4u)) {
        // Beast's echo: FIN+close, a 2-byte payload, masked (client) or not (server). Write a
        // copy whose code is replaced.
        frame_size_ = p[1] == 0x82u ? 8u : 4u;
        frame_start_ = p;
        std::copy(p, p + frame_size_, frame_.begin());
        const bool masked = frame_size_ == 8u;
        const auto hi = static_cast<unsigned char>(*replace_ >> 8);
        const auto lo = static_cast<unsigned char>(*replace_ & 0xFFu);
        frame_[frame_size_ - 2] = masked ? static_cast<unsigned char>(hi ^ p[2]) : hi;
        frame_[frame_size_ - 1] = masked ? static_cast<unsigned char>(lo ^ p[3]) : lo;
        replace_.reset();
      }
      if (frame_size_ != 0) {
        if (p >= frame_start_ && p < frame_start_ + frame_size_) {
          // The frame, or (after a short write) the rest of it: from the copy.
          const auto offset = static_cast<std::size_t>(p - frame_start_);
          const std::size_t n = std::min(first.size(), frame_size_ - offset);
          return next_.async_write_some(boost::asio::buffer(frame_.data() + offset, n),
                                        std::forward<WriteToken>(token));
        }
        frame_size_ = 0;  // the copy went out; this write is something else
      }
    }
    return next_.async_write_some(buffers, std::forward<WriteToken>(token));
  }

 private:
  NextLayer next_;
  std::optional<std::uint16_t> replace_;
  std::array<unsigned char, 8> frame_{};
  const unsigned char* frame_start_ = nullptr;
  std::size_t frame_size_ = 0;
};

/// Teardown goes to the next layer (Beast finds these by argument-dependent lookup).
template <class NextLayer>
void teardown(boost::beast::role_type role,
              CloseEchoGuard<NextLayer>& stream,
              boost::system::error_code& ec) {
  using boost::beast::websocket::teardown;
  teardown(role, stream.next_layer(), ec);
}

template <class NextLayer, class TeardownHandler>
void async_teardown(boost::beast::role_type role,
                    CloseEchoGuard<NextLayer>& stream,
                    TeardownHandler&& handler) {
  using boost::beast::websocket::async_teardown;
  async_teardown(role, stream.next_layer(), std::forward<TeardownHandler>(handler));
}

template <class Stream>
class BeastWebSocket final : public WebSocket,
                             public std::enable_shared_from_this<BeastWebSocket<Stream>> {
 public:
  using executor_type = typename Stream::executor_type;

  explicit BeastWebSocket(Stream ws)
      : ex_(ws.get_executor()), ws_(std::move(ws)), wake_(ex_), drained_(ex_) {}

  /// The underlying stream, for configuration and the handshake. Strand only, before start().
  Stream& stream() { return ws_; }
  const executor_type& get_executor() const { return ex_; }

  /// Starts the writer coroutine. Call once, on the strand, after the handshake succeeded.
  void start() {
    if constexpr (requires { ws_.next_layer().replace_close_echo(std::uint16_t{}); }) {
      // Runs inside Beast's read, after it parsed a peer close frame and before it echoes it.
      ws_.control_callback(
          [this](boost::beast::websocket::frame_type kind, boost::beast::string_view) {
            if (kind == boost::beast::websocket::frame_type::close) {
              const std::uint16_t code = ws_.reason().code;
              if (code != 0 && !is_valid_close_code(code)) {
                ws_.next_layer().replace_close_echo(1002);
              }
            }
          });
    }
    auto self = this->shared_from_this();
    util::spawn(ex_, write_loop(std::move(self)), "websocket writer");
  }

  /// Before the socket is started: queued outgoing bytes beyond which it is closed (0: no cap).
  /// Past half of it, reading pauses (receive() waits) until the peer has taken enough, so a
  /// peer that asks for replies faster than it reads them is slowed down rather than cut off;
  /// one that takes nothing for `stall` while paused is closed like one over the cap.
  void set_send_backlog_limit(std::size_t bytes,
                              std::chrono::milliseconds stall = std::chrono::seconds(30)) {
    backlog_limit_ = bytes;
    stall_timeout_ = stall;
  }

  void send(WsMessage msg) override {
    if (close_called_.load(std::memory_order_acquire)) {
      return;  // sends after close() are dropped
    }
    const std::size_t size = msg.data.size();
    const std::size_t queued = buffered_.fetch_add(size, std::memory_order_relaxed) + size;
    if (backlog_limit_ != 0 && queued > backlog_limit_) {
      // The peer does not read what it asked for: queueing more would grow without bound.
      buffered_.fetch_sub(size, std::memory_order_relaxed);
      log::warn("websocket: {} bytes queued for a peer that does not read; closing", queued);
      boost::asio::post(ex_, [self = this->shared_from_this()] { self->drop_backlog(); });
      close(1008, "ws.send_backlog_exceeded");
      return;
    }
    boost::asio::post(ex_, [self = this->shared_from_this(), m = std::move(msg)]() mutable {
      self->enqueue(std::move(m));
    });
  }

  void close(std::uint16_t code, std::string reason) override {
    if (close_called_.exchange(true, std::memory_order_acq_rel)) {
      return;  // first close wins
    }
    boost::asio::post(ex_, [self = this->shared_from_this(), code,
                            r = truncate_utf8(std::move(reason), kMaxCloseReasonBytes)]() mutable {
      self->request_close(code, std::move(r));
    });
  }

  Task<std::optional<WsMessage>> receive() override {
    auto self = this->shared_from_this();
    auto op = read_one(std::move(self));
    co_return co_await boost::asio::co_spawn(ex_, std::move(op), boost::asio::use_awaitable);
  }

  WsCloseInfo close_info() const override {
    std::lock_guard lock(info_mu_);
    return info_;
  }

  std::size_t buffered_bytes() const override { return buffered_.load(std::memory_order_relaxed); }

  /// True once close() was called or the socket ended (any thread; advisory).
  bool close_requested() const { return close_called_.load(std::memory_order_acquire); }

 private:
  // --- strand only below ---

  void enqueue(WsMessage msg) {
    if (finished_ || close_pending_) {
      buffered_.fetch_sub(msg.data.size(), std::memory_order_relaxed);
      return;
    }
    queue_.push_back(std::move(msg));
    wake_.cancel();
  }

  /// The queue is dropped (the close goes first): a peer that does not read gets no more of it.
  void drop_backlog() {
    for (const auto& m : queue_) {
      buffered_.fetch_sub(m.data.size(), std::memory_order_relaxed);
    }
    queue_.clear();
    // The close frame waits behind a write the peer may never take: give it a few seconds, then
    // cut the connection (its memory is already bounded; the socket must not linger either).
    auto timer = std::make_shared<boost::asio::steady_timer>(ex_, std::chrono::seconds(5));
    timer->async_wait([self = this->shared_from_this(), timer](boost::system::error_code) {
      if (!self->finished_) {
        self->set_close_info(1008, "ws.send_backlog_exceeded");
        self->finish();
      }
    });
  }

  void request_close(std::uint16_t code, std::string reason) {
    if (finished_ || close_pending_) {
      return;
    }
    const std::uint16_t wire = sendable_close_code(code);
    set_close_info(wire, wire == 1005 ? std::string() : reason);
    close_pending_ = boost::beast::websocket::close_reason(wire == 1005 ? std::uint16_t{0} : wire);
    if (wire != 1005) {
      close_pending_->reason.assign(reason.data(), reason.size());
    }
    wake_.cancel();
  }

  /// The socket can no longer be written (closed or failed): drop the queue, wake the writer.
  void finish() {
    finished_ = true;
    close_called_.store(true, std::memory_order_release);
    wake_.cancel();
    drained_.cancel();
    // Beast leaves the socket open after a failure; a clean close already tore it down.
    boost::beast::get_lowest_layer(ws_).close();
  }

  void set_close_info(std::uint16_t code, std::string reason) {
    std::lock_guard lock(info_mu_);
    if (info_set_) {
      return;
    }
    info_set_ = true;
    info_.code = code;
    info_.reason = std::move(reason);
  }

  static metrics::Counter& metrics_sent() {
    static metrics::Counter& c = metrics::runtime().bytes_sent.with({"websocket"});
    return c;
  }
  static metrics::Counter& metrics_received() {
    static metrics::Counter& c = metrics::runtime().bytes_received.with({"websocket"});
    return c;
  }

  Task<void> write_loop(std::shared_ptr<BeastWebSocket> self) {
    namespace asio = boost::asio;
    constexpr auto tok = asio::as_tuple(asio::use_awaitable);
    for (;;) {
      if (finished_) {
        break;
      }
      if (!queue_.empty()) {
        WsMessage msg = std::move(queue_.front());
        queue_.pop_front();
        ws_.binary(msg.binary);
        auto buf = asio::buffer(msg.data);
        auto [ec, n] = co_await ws_.async_write(buf, tok);
        metrics_sent().inc(n);
        buffered_.fetch_sub(msg.data.size(), std::memory_order_relaxed);
        if (read_paused_ && buffered_.load(std::memory_order_relaxed) <= backlog_limit_ / 2) {
          drained_.cancel();  // the paused reader may go on
        }
        if (ec) {
          set_close_info(1006, std::string());
          log::debug("websocket write failed: {}", ec.message());
          finish();
          break;
        }
        continue;
      }
      if (close_pending_) {
        boost::beast::websocket::close_reason cr = *close_pending_;
        auto [ec] = co_await ws_.async_close(cr, tok);
        if (ec && ec != asio::error::operation_aborted) {
          log::debug("websocket close handshake ended: {}", ec.message());
        }
        finish();
        break;
      }
      wake_.expires_at(asio::steady_timer::time_point::max());
      auto [ec] = co_await wake_.async_wait(tok);
      (void)ec;  // cancelled on purpose to wake us
    }
    for (const auto& m : queue_) {
      buffered_.fetch_sub(m.data.size(), std::memory_order_relaxed);
    }
    queue_.clear();
    (void)self;
  }

  Task<std::optional<WsMessage>> read_one(std::shared_ptr<BeastWebSocket> self) {
    namespace asio = boost::asio;
    (void)self;
    if (read_done_) {
      co_return std::nullopt;
    }
    if (backlog_limit_ != 0 && buffered_.load(std::memory_order_relaxed) > backlog_limit_ / 2) {
      co_await wait_for_backlog();
    }
    boost::beast::flat_buffer buf;
    auto [ec, n] = co_await ws_.async_read(buf, asio::as_tuple(asio::use_awaitable));
    metrics_received().inc(n);
    if (!ec) {
      WsMessage msg;
      msg.binary = !ws_.got_text();
      msg.data = boost::beast::buffers_to_string(buf.data());
      co_return msg;
    }
    read_done_ = true;
    if (ec == boost::beast::websocket::error::closed) {
      const auto& cr = ws_.reason();
      if (cr.code != 0 && !is_valid_close_code(cr.code)) {
        set_close_info(1002, std::string());  // what we answered (see CloseEchoGuard)
      } else {
        const std::uint16_t code = cr.code == 0 ? std::uint16_t{1005} : cr.code;
        set_close_info(code, std::string(cr.reason.data(), cr.reason.size()));
      }
    } else {
      set_close_info(close_code_for_read_error(ec), std::string());
      log::debug("websocket read ended: {}", ec.message());
    }
    // After a read error the stream is closed, closing or failed: no more writes either. A
    // close we requested is left to the writer (it owns the close handshake).
    if (!close_pending_) {
      finish();
    }
    co_return std::nullopt;
  }

  /// Read backpressure: resumes once the unsent backlog is at most half the cap, the socket
  /// ended, or the peer took nothing for the stall timeout (then it is closed with 1008).
  Task<void> wait_for_backlog() {
    namespace asio = boost::asio;
    const std::size_t resume_at = backlog_limit_ / 2;
    std::size_t lowest = buffered_.load(std::memory_order_relaxed);
    auto progress_at = std::chrono::steady_clock::now();
    log::debug("websocket: {} bytes unread by the peer; reading paused", lowest);
    while (!finished_ && !close_pending_) {
      const std::size_t now_buffered = buffered_.load(std::memory_order_relaxed);
      if (now_buffered <= resume_at) {
        break;
      }
      const auto now = std::chrono::steady_clock::now();
      if (now_buffered < lowest) {
        lowest = now_buffered;
        progress_at = now;
      } else if (stall_timeout_.count() > 0 && now - progress_at >= stall_timeout_) {
        log::warn("websocket: {} bytes queued for a peer that reads none of them; closing",
                  now_buffered);
        drop_backlog();
        close(1008, "ws.send_backlog_exceeded");
        break;
      }
      read_paused_ = true;
      drained_.expires_after(std::chrono::milliseconds(250));
      auto [ec] = co_await drained_.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;  // cancelled when the writer made room
      read_paused_ = false;
    }
  }

  const executor_type ex_;
  Stream ws_;
  boost::asio::steady_timer wake_;
  boost::asio::steady_timer drained_;  // wakes a reader paused by wait_for_backlog
  bool read_paused_ = false;
  std::chrono::milliseconds stall_timeout_{30'000};
  std::deque<WsMessage> queue_;
  std::size_t backlog_limit_ = 0;  // set before start; read-only afterwards
  std::optional<boost::beast::websocket::close_reason> close_pending_;
  bool finished_ = false;
  bool read_done_ = false;

  std::atomic<bool> close_called_{false};
  std::atomic<std::size_t> buffered_{0};

  mutable std::mutex info_mu_;
  bool info_set_ = false;
  WsCloseInfo info_;  // meaningful once the socket ended
};

/// The plain (no TLS) Beast websocket stream used by the local-mode server.
using PlainWsStream = boost::beast::websocket::stream<CloseEchoGuard<boost::beast::tcp_stream>>;

extern template class BeastWebSocket<PlainWsStream>;

}  // namespace rivetkit::net::detail
