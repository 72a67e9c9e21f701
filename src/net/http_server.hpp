#pragma once
// HTTP/1.1 + WebSocket server on one port (local mode's listener). Pure transport: it knows
// nothing about actors. Beast is confined to this module's .cpp files.
//
// Each connection runs as one coroutine on its own strand of the given io_context. Requests on a
// keep-alive connection are handled one at a time, in order. An upgrade request is handed to
// on_websocket after the 101 is sent; the handler owns the socket until it returns (the socket is
// closed when the last reference is dropped).

#include "net/http_types.hpp"
#include "net/websocket.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rivetkit::net {

struct HttpServerConfig {
  /// Largest request body accepted; larger bodies get 413 and the connection is closed.
  std::size_t max_body_bytes = 32u << 20;
  std::size_t max_header_bytes = 64u << 10;
  /// Largest WebSocket message accepted; a larger one fails the socket with close 1009.
  std::size_t max_ws_message_bytes = 32u << 20;
  /// Idle keep-alive connections are closed after this long.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(120)};
  /// Time allowed to receive a full request header once a connection is readable.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(30)};
};

struct WsAccept {
  /// Sec-WebSocket-Protocol to answer with (nullopt: none).
  std::optional<std::string> subprotocol;
  Headers extra_headers;
};

struct HttpHandlers {
  std::function<Task<HttpResponse>(HttpRequest)> on_http;
  /// Decides the 101 response for an upgrade request (called before the handshake completes).
  std::function<WsAccept(const HttpRequest&)> accept_websocket;
  /// Serves an accepted socket.
  std::function<Task<void>(HttpRequest, std::shared_ptr<WebSocket>)> on_websocket;
};

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpServerConfig config, HttpHandlers handlers);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds and starts accepting. Port 0 picks an ephemeral port; the bound port is returned.
  Result<std::uint16_t> listen(const std::string& host, std::uint16_t port);
  /// Stops accepting new connections (existing ones continue until closed).
  void stop_accepting();
  /// Closes every open connection and WebSocket (1001 going away for sockets).
  void close_all();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rivetkit::net
