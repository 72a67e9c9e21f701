#pragma once
/// A raw WebSocket handed to `on_websocket` (the client's `handle.webSocket(path)`).
///
/// Handlers registered with on_message/on_close run on the actor's strand, one at a time, in
/// arrival order; while one runs (including across its co_awaits) the actor stays awake, and a
/// stopping actor waits for it (within its grace period). send/close may be called from any code
/// of the actor.

#include <rivetkit/http.hpp>
#include <rivetkit/task.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace rivetkit {

struct WebSocketMessage {
  bool binary = false;
  std::string data;
  /// The message's index on a hibernatable socket (RivetKit's `rivetMessageIndex`: 1, 2, ... in
  /// the order the client sent them, kept across the actor's sleeps); nullopt on other sockets.
  std::optional<std::uint32_t> index;
};

class WebSocket {
 public:
  class Impl;
  explicit WebSocket(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  /// Sends a text frame.
  void send(std::string_view text) const;
  /// Sends a binary frame.
  void send_binary(std::string_view data) const;
  /// Closes the socket (default 1000, no reason). `code` must be one an endpoint may send
  /// (RFC 6455 §7.4: 1000-1003, 1007-1014 or 3000-4999), else this throws std::invalid_argument
  /// and the socket stays open (like `ws.close(5000)` in Node).
  void close(std::uint16_t code = 1000, std::string reason = {}) const;

  /// Handler: `void(WebSocketMessage)` or `Task<void>(WebSocketMessage)`.
  template <class F>
  void on_message(F handler) const {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, WebSocketMessage>>) {
      // A plain function wrapped into a coroutine that takes the handler by value, so no
      // coroutine ever refers to a lambda object that could be destroyed under it.
      set_message_handler(
          [h = std::move(handler)](WebSocketMessage m) { return run_plain(h, std::move(m)); });
    } else {
      set_message_handler(std::move(handler));
    }
  }
  /// Handler: `void(std::uint16_t code, std::string reason)` or the same returning Task<void>.
  template <class F>
  void on_close(F handler) const {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, std::uint16_t, std::string>>) {
      set_close_handler([h = std::move(handler)](std::uint16_t code, std::string reason) {
        return run_plain_close(h, code, std::move(reason));
      });
    } else {
      set_close_handler(std::move(handler));
    }
  }

  /// The upgrade request (path without the `/websocket` prefix is in request().path).
  const Request& request() const;
  /// True when on_websocket runs again for a socket that survived the actor's sleep
  /// (ActorOptions::can_hibernate_websocket): register handlers again, skip any greeting.
  bool restored() const;

 private:
  template <class F>
  static Task<void> run_plain(F handler, WebSocketMessage m) {
    handler(std::move(m));
    co_return;
  }
  template <class F>
  static Task<void> run_plain_close(F handler, std::uint16_t code, std::string reason) {
    handler(code, std::move(reason));
    co_return;
  }
  void set_message_handler(std::function<Task<void>(WebSocketMessage)> handler) const;
  void set_close_handler(std::function<Task<void>(std::uint16_t, std::string)> handler) const;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rivetkit
