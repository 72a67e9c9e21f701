#pragma once
/// A raw WebSocket handed to `on_websocket` (the client's `handle.webSocket(path)`).
///
/// Handlers registered with on_message/on_close run on the actor's strand, one at a time, in
/// arrival order; while one runs (including across its co_awaits) the actor stays awake.
/// send/close may be called from any code of the actor.

#include <rivetkit/http.hpp>
#include <rivetkit/task.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace rivetkit {

struct WebSocketMessage {
  bool binary = false;
  std::string data;
};

class WebSocket {
 public:
  class Impl;
  explicit WebSocket(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  /// Sends a text frame.
  void send(std::string_view text) const;
  /// Sends a binary frame.
  void send_binary(std::string_view data) const;
  /// Closes the socket (default 1000, no reason).
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
  void on_close(std::function<void(std::uint16_t code, std::string reason)> handler) const;

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
  void set_message_handler(std::function<Task<void>(WebSocketMessage)> handler) const;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rivetkit
