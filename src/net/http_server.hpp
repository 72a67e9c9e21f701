#pragma once
// HTTP/1.1 + WebSocket server on one port (local mode's listener). Pure transport: it knows
// nothing about actors. Beast is confined to this module's .cpp files.
//
// Each connection runs as one coroutine on its own strand of the given io_context. Requests on a
// keep-alive connection are handled one at a time, in order. An upgrade request is handed to
// on_websocket after the 101 is sent; the handler owns the socket until it returns. When it
// returns, the server closes the socket if the handler did not: 1000 (empty reason) on a normal
// return, 1011 "core.internal_error" if it threw. The object stays valid for anyone still holding
// a reference (send/close are then no-ops).
//
// Handlers run on the connection's strand and may hop to other executors (actor strands); they
// are awaited normally. If the client disconnects while on_http runs, its response is dropped.
//
// Error answers (each followed by `Connection: close` and a bounded lingering close):
//   400 malformed request, 413 body over max_body_bytes (Content-Length checked before reading,
//   chunked bodies while reading), 431 header over max_header_bytes, 500 JSON
//   {"group":"core","code":"internal_error","message":"An internal error occurred"} when on_http
//   throws (the connection stays usable). Timeouts, EOF and resets close silently.
// Responses: status and headers as given (names sent lower-case); Content-Length is always set
// from the body (handler-supplied content-length/transfer-encoding/connection are ignored, but a
// `connection: close` from the handler closes after the response); HEAD gets the length without
// the body; 1xx/204/304 get neither. `Expect: 100-continue` is answered with 100 before the body
// is read. Accepted sockets get TCP_NODELAY.
//
// WebSocket: permessage-deflate is never negotiated; no pings are sent; read_message_max is
// max_ws_message_bytes. header_timeout also bounds the opening and closing handshakes. Bytes a
// client sends after the upgrade request but before receiving the 101 are discarded (RFC 6455
// clients wait for the 101).
//
// Lifetime: the server's internals are shared with its connection coroutines. The handlers (and
// whatever they capture) must stay valid while the io_context can still run them; destroying the
// HttpServer calls stop_accepting() and close_all() but does not wait.

#include "net/http_types.hpp"
#include "net/websocket.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::net {

struct HttpServerConfig {
  /// Largest request body accepted; larger bodies get 413 and the connection is closed.
  std::size_t max_body_bytes = 32u << 20;
  /// Largest request header block; larger headers get 431 and the connection is closed.
  std::size_t max_header_bytes = 64u << 10;
  /// Largest WebSocket message accepted; a larger one fails the socket with close 1009.
  std::size_t max_ws_message_bytes = 32u << 20;
  /// Outgoing bytes a WebSocket may have queued (a peer that does not read): beyond it the socket
  /// is closed (1008 "ws.send_backlog_exceeded") and the queue dropped, so memory stays bounded.
  std::size_t max_ws_send_backlog_bytes = 16u << 20;
  /// How long a WebSocket peer may leave half the backlog unread, taking none of it, before it is
  /// closed (0: never).
  std::chrono::milliseconds ws_send_stall_timeout{30'000};
  /// Open connections at most (0: derived from the process's file descriptor limit, less a
  /// reserve for storage and outgoing sockets). A connection beyond it is answered 503 and
  /// closed at once, so that at the fd limit clients still get an answer instead of silence.
  std::size_t max_connections = 0;
  /// A request body must arrive whole within this long (on top of idle_timeout between reads),
  /// so a body that trickles in cannot hold its buffer for ever.
  std::chrono::milliseconds body_timeout{std::chrono::seconds(60)};
  /// Idle keep-alive connections are closed after this long. Also the inactivity limit while
  /// reading a body (renewed on every read) and the deadline for writing a response.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(120)};
  /// Time allowed to receive a full request header once a connection is readable.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(30)};
};

struct WsAccept {
  /// Sec-WebSocket-Protocol to answer with (nullopt: none).
  std::optional<std::string> subprotocol;
  Headers extra_headers;
  /// Largest message read on this socket (nullopt: max_ws_message_bytes); Beast refuses a larger
  /// one as its frames arrive (1009), so it is never buffered whole.
  std::optional<std::size_t> max_message_bytes;
};

struct HttpHandlers {
  std::function<Task<HttpResponse>(HttpRequest)> on_http;
  /// The largest body a request for this target may have, decided before the body is read
  /// (nullptr: max_body_bytes; never more than that). A declared Content-Length above it is
  /// refused with 413 at once; a chunked body as soon as it passes it.
  std::function<std::size_t(std::string_view target)> body_limit;
  /// An answer decided from the request's head alone, before any of its body is read (e.g. a
  /// request whose headers are refused); nullopt: read the body and call on_http. The connection
  /// closes after such an answer. Called only for requests with a body within max_body_bytes
  /// (beyond it the server answers 413 itself), before body_limit.
  std::function<std::optional<HttpResponse>(const HttpRequest& head)> answer_head;
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
  /// `host` is a numeric IPv4/IPv6 address or "localhost" (127.0.0.1); no DNS lookup. Errors (group
  /// "net"): already_listening (called twice), invalid_address, listen_failed (open/bind/listen
  /// failed, e.g. port in use).
  Result<std::uint16_t> listen(const std::string& host, std::uint16_t port);
  /// Stops accepting new connections (existing ones continue until closed). Thread-safe and
  /// asynchronous: it takes effect on the acceptor's strand shortly after the call.
  void stop_accepting();
  /// Closes every open connection: WebSockets get close 1001 "ws.going_away"; HTTP
  /// connections that are not running a handler are aborted; one whose handler is running sends
  /// its response with `Connection: close`. Does not stop accepting. Thread-safe, asynchronous.
  void close_all();
  /// Shutting down: from now on requests on new or idle connections are not served; WebSocket
  /// upgrades are accepted and closed with 1001 "ws.going_away", HTTP requests get 503 and a
  /// close. Connections already serving continue (close_all() ends them). Thread-safe.
  void drain();
  /// Connections not yet ended (WebSockets count until their close handshake is done or timed
  /// out). Thread-safe. A graceful stop waits for this to reach 0 before stopping the I/O, so
  /// the close frames close_all() queued are written (else clients see 1006 and RivetKit's
  /// client does not reconnect).
  std::size_t open_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rivetkit::net
