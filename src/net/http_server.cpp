// HTTP/1.1 server: accept loop, per-connection sessions, request parsing and response writing.
// Instantiates Beast's HTTP read/write operations on beast::tcp_stream; every WebSocket
// operation lives in websocket.cpp (see ws_accept.hpp).
//
// Connection lifecycle (one coroutine per connection, on its own strand):
//   wait for the first byte (idle_timeout) -> read the header (header_timeout) ->
//   [100 Continue] -> read the body (idle_timeout of inactivity per read) ->
//   upgrade?  yes: hand the stream to the WebSocket path, the session ends with the socket.
//             no:  run on_http, write the response, loop while keep-alive.
// Parse failures and ambiguous framing (a Transfer-Encoding that is not exactly a final
// `chunked`, or one with Content-Length) answer 400 (431 for an oversize header, 413 for an
// oversize body, 501 for an unsupported transfer coding under `chunked`) with
// `Connection: close`, then close after a bounded lingering read so the client sees the status.
// Timeouts, resets and EOF just close the connection.
//
// close_all(): WebSockets get 1001; connections that are not running a handler are aborted;
// a connection whose handler is running writes its response with `Connection: close`.

#include "net/http_server.hpp"

#include "net/ws_accept.hpp"
#include "util/log.hpp"
#include "util/metrics.hpp"
#include "util/spawn.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rivetkit::net {

namespace {

metrics::Counter& bytes_sent() {
  static metrics::Counter& c = metrics::runtime().bytes_sent.with({"http"});
  return c;
}
metrics::Counter& bytes_received() {
  static metrics::Counter& c = metrics::runtime().bytes_received.with({"http"});
  return c;
}

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using BeastRequest = http::request<http::string_body>;
using BeastResponse = http::response<http::string_body>;

constexpr auto kTok = asio::as_tuple(asio::use_awaitable);

/// Size of the first read on an idle connection.
constexpr std::size_t kFirstReadBytes = 4096;
/// After an error response: how long and how much to read before closing, so that the client
/// reads the status instead of a reset caused by its unread request bytes.
constexpr std::chrono::seconds kLingerTimeout{2};
constexpr std::size_t kLingerMaxBytes = 1u << 20;
/// Deadline for writing an error response.
constexpr std::chrono::seconds kErrorWriteTimeout{5};
/// Back-off after a failed accept (e.g. EMFILE), so a persistent error does not spin.
constexpr std::chrono::milliseconds kAcceptRetryDelay{50};

constexpr std::string_view kInternalErrorBody =
    R"({"group":"core","code":"internal_error","message":"An internal error occurred"})";
constexpr std::uint16_t kCloseNormal = 1000;
constexpr std::uint16_t kCloseGoingAway = 1001;
constexpr std::uint16_t kCloseInternalError = 1011;
// RivetKit's structured reason (group.code): the official client reads it as a lifecycle signal
// and reconnects (client-protocol.md §8.3); free text would not parse.
constexpr std::string_view kGoingAwayReason = "ws.going_away";
constexpr std::string_view kInternalErrorReason = "core.internal_error";

char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), ascii_lower);
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

/// Calls `fn(element)` for each element of a comma-separated header list, trimmed of spaces and
/// tabs (empty elements included); stops early when `fn` returns true. Returns whether it did.
template <class Fn>
bool for_each_list_element(std::string_view value, Fn&& fn) {
  while (!value.empty()) {
    const auto comma = value.find(',');
    std::string_view part = value.substr(0, comma);
    while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) {
      part.remove_prefix(1);
    }
    while (!part.empty() && (part.back() == ' ' || part.back() == '\t')) {
      part.remove_suffix(1);
    }
    if (fn(part)) {
      return true;
    }
    if (comma == std::string_view::npos) {
      break;
    }
    value.remove_prefix(comma + 1);
  }
  return false;
}

/// True if `value` contains the comma-separated token `token` (case-insensitive).
bool has_token(std::string_view value, std::string_view token) {
  return for_each_list_element(value, [&](std::string_view part) { return iequals(part, token); });
}

bool valid_header_name(std::string_view name) {
  if (name.empty()) {
    return false;
  }
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F || c == ':') {
      return false;
    }
  }
  return true;
}

bool valid_header_value(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

/// Framing check the parser does not make (RFC 9112 §6.1, §6.3): Beast ignores a
/// Transfer-Encoding whose final coding is not `chunked` and then frames the body by
/// Content-Length or as empty, so the body bytes would be parsed as the next request (request
/// smuggling when a proxy in front frames it differently). Returns the status to refuse the
/// request with and close, or 0 if the framing is unambiguous.
unsigned framing_error_status(const http::request_parser<http::string_body>& parser) {
  const auto& h = parser.get();
  std::vector<std::string_view> codings;
  bool has_te = false;
  for (const auto& f : h) {
    if (f.name() != http::field::transfer_encoding) {
      continue;
    }
    has_te = true;
    for_each_list_element(f.value(), [&](std::string_view part) {
      if (!part.empty()) {  // empty list elements are allowed and mean nothing (RFC 9110 §5.6.1)
        codings.push_back(part);
      }
      return false;
    });
  }
  if (!has_te) {
    return 0;
  }
  // An HTTP/1.0 message with Transfer-Encoding has faulty framing (§6.1), as has one that also
  // carries Content-Length (§6.3 item 3: a server may reject it and must then close).
  if (h.version() < 11 || h.find(http::field::content_length) != h.end()) {
    return 400;
  }
  if (codings.empty() || !iequals(codings.back(), "chunked")) {
    return 400;  // the length cannot be determined (§6.3 item 4)
  }
  for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
    if (iequals(codings[i], "chunked")) {
      return 400;  // chunked applied twice (§7)
    }
  }
  // Well framed, but with a coding under the chunking that this server does not decode.
  return codings.size() == 1 ? 0 : 501;
}

HttpRequest to_request(const BeastRequest& req, const std::string& remote) {
  HttpRequest out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  out.headers.reserve(static_cast<std::size_t>(std::distance(req.begin(), req.end())));
  for (const auto& f : req) {
    out.headers.push_back(Header{lower(f.name_string()), std::string(f.value())});
  }
  out.remote_address = remote;
  return out;
}

HttpResponse internal_error_response() {
  HttpResponse res;
  res.status = 500;
  res.headers.push_back(Header{"content-type", "application/json"});
  res.body = std::string(kInternalErrorBody);
  return res;
}

/// The handler's headers on a wire response (framing headers are ours). `keep_alive` is in/out:
/// a handler's `connection: close` clears it.
template <class Message>
void apply_headers(Message& res, Headers& headers, bool& keep_alive) {
  for (auto& h : headers) {
    const std::string name = lower(h.name);
    if (name == "content-length" || name == "transfer-encoding") {
      continue;  // framing is ours
    }
    if (name == "connection") {
      if (has_token(h.value, "close")) {
        keep_alive = false;
      }
      continue;
    }
    if (!valid_header_name(name) || !valid_header_value(h.value)) {
      log::warn("http: dropping invalid response header '{}'", name);
      continue;
    }
    res.insert(name, h.value);
  }
}

/// Builds the wire response. `keep_alive` is in/out: a handler's `connection: close` clears it.
BeastResponse to_beast_response(HttpResponse in, unsigned version, bool head, bool& keep_alive) {
  BeastResponse res;
  res.version(version);
  const unsigned status = (in.status >= 100 && in.status <= 999) ? in.status : 500;
  res.result(status);
  apply_headers(res, in.headers, keep_alive);
  const bool no_body = status < 200 || status == 204 || status == 304;
  if (no_body) {
    res.body().clear();
  } else if (head) {
    res.content_length(in.body.size());  // the length a GET would have, no body
  } else {
    res.content_length(in.body.size());
    res.body() = std::move(in.body);
  }
  res.keep_alive(keep_alive);
  return res;
}

/// The status to answer a failed request read with, or 0 to close silently.
unsigned status_for_read_error(const beast::error_code& ec) {
  if (ec == http::error::body_limit) {
    return 413;
  }
  if (ec == http::error::header_limit) {
    return 431;
  }
  if (ec == http::error::end_of_stream || ec == http::error::partial_message
      || ec == http::error::need_more || ec == http::error::need_buffer) {
    return 0;
  }
  if (ec.category() == http::make_error_code(http::error::bad_method).category()) {
    return 400;
  }
  return 0;  // I/O error, timeout, cancellation
}

}  // namespace

namespace detail {

/// One accepted connection, shared between its session and close_all().
struct HttpConn {
  HttpConn(tcp::socket s, std::string remote_address)
      : ex(s.get_executor()), stream(std::move(s)), remote(std::move(remote_address)) {}
  const asio::any_io_executor ex;  // the connection's strand
  beast::tcp_stream stream;        // moved into the WebSocket on upgrade
  const std::string remote;
  // Strand only:
  bool busy = false;      // a handler is running or its response is being written
  bool closing = false;   // close_all() was called
  bool upgraded = false;  // `stream` was moved out
  std::shared_ptr<WebSocket> ws;
};

}  // namespace detail

using Conn = detail::HttpConn;

namespace {

// A streamed body's writer: each piece is one chunk, written on the connection's strand.
class ChunkWriter final : public ResponseStream {
 public:
  ChunkWriter(std::shared_ptr<Conn> conn, std::chrono::steady_clock::duration timeout)
      : conn_(std::move(conn)), timeout_(timeout) {}

  Task<bool> write(std::string data) override {
    auto op = asio::co_spawn(conn_->ex, write_on_strand(std::move(data)), asio::use_awaitable);
    co_return co_await std::move(op);
  }
  bool failed() const { return failed_; }

 private:
  Task<bool> write_on_strand(std::string data) {
    if (failed_ || conn_->closing) {
      failed_ = true;
      co_return false;
    }
    if (data.empty()) {
      co_return true;  // an empty chunk would end the body
    }
    conn_->stream.expires_after(timeout_);
    auto [ec, n] =
        co_await asio::async_write(conn_->stream, http::make_chunk(asio::buffer(data)), kTok);
    bytes_sent().inc(n);
    if (ec) {
      failed_ = true;
    }
    co_return !failed_;
  }

  std::shared_ptr<Conn> conn_;
  std::chrono::steady_clock::duration timeout_;
  bool failed_ = false;
};

// Writes a streamed response: the head (chunked), the pieces the handler writes, the last chunk.
// The connection closes afterwards.
Task<void> write_streamed(std::shared_ptr<Conn> conn,
                          HttpResponse response,
                          unsigned version,
                          std::chrono::steady_clock::duration timeout) {
  http::response<http::empty_body> head;
  head.version(version);
  head.result(response.status);
  bool keep_alive = false;
  apply_headers(head, response.headers, keep_alive);
  head.chunked(true);
  head.keep_alive(false);
  http::response_serializer<http::empty_body> serializer{head};
  conn->stream.expires_after(timeout);
  auto [ec, n] = co_await http::async_write_header(conn->stream, serializer, kTok);
  bytes_sent().inc(n);
  if (ec) {
    co_return;
  }
  ChunkWriter writer(conn, timeout);
  try {
    auto stream_op = response.stream(writer);
    co_await std::move(stream_op);
  } catch (const std::exception& e) {
    log::error("http: response stream failed: {}", e.what());
  } catch (...) {
    log::error("http: response stream failed: unknown exception");
  }
  if (!writer.failed()) {
    conn->stream.expires_after(timeout);
    auto [lec, ln] = co_await asio::async_write(conn->stream, http::make_chunk_last(), kTok);
    bytes_sent().inc(ln);
    (void)lec;
  }
}

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& io_context, HttpServerConfig cfg, HttpHandlers hs)
      : io(io_context),
        config(std::move(cfg)),
        handlers(std::move(hs)),
        acceptor_ex(asio::make_strand(io_context)),
        acceptor(acceptor_ex),
        connection_cap(config.max_connections != 0 ? config.max_connections
                                                   : default_connection_cap()) {}

  /// The soft RLIMIT_NOFILE less a reserve (database, engine link, outgoing sockets, logs).
  static std::size_t default_connection_cap() {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) {
      return 1u << 20;
    }
    const auto n = static_cast<std::size_t>(lim.rlim_cur);
    return n > 256 ? n - 128 : std::max<std::size_t>(n / 2, 1);
  }

  asio::io_context& io;
  const HttpServerConfig config;
  const HttpHandlers handlers;
  const asio::any_io_executor acceptor_ex;
  tcp::acceptor acceptor;            // acceptor_ex only, once the accept loop runs
  const std::size_t connection_cap;  // config.max_connections, or derived from the fd limit

  /// drain(): new requests are answered "going away" instead of being served.
  std::atomic<bool> draining{false};

  std::mutex mu;  // guards the fields below
  bool listening = false;
  std::uint64_t next_id = 0;
  std::unordered_map<std::uint64_t, std::weak_ptr<Conn>> conns;

  std::atomic<bool> cap_warned{false};
  std::size_t open_count() {
    std::lock_guard lock(mu);
    return conns.size();
  }

  std::uint64_t add_conn(const std::shared_ptr<Conn>& c) {
    std::lock_guard lock(mu);
    const auto id = next_id++;
    conns.emplace(id, c);
    return id;
  }
  void remove_conn(std::uint64_t id) {
    std::lock_guard lock(mu);
    conns.erase(id);
  }

  /// Unregisters a connection when the session coroutine ends (including by destruction).
  struct ConnRegistration {
    std::shared_ptr<Impl> impl;
    std::uint64_t id;
    ~ConnRegistration() { impl->remove_conn(id); }
  };

  std::uint32_t header_limit() const {
    return static_cast<std::uint32_t>(
        std::min<std::size_t>(config.max_header_bytes, std::numeric_limits<std::uint32_t>::max()));
  }

  static Task<void> accept_loop(std::shared_ptr<Impl> self);
  static Task<void> session(std::shared_ptr<Impl> self, tcp::socket socket);
  static Task<void> serve_websocket(std::shared_ptr<Impl> self,
                                    std::shared_ptr<Conn> conn,
                                    BeastRequest req);
  static Task<HttpResponse> run_handler(std::shared_ptr<Impl> self, HttpRequest req);
  static Task<void> fail_and_close(std::shared_ptr<Conn> conn, unsigned status, unsigned version);
  /// Writes `res`, then closes with a lingering close (the request's body may be unread).
  static Task<void> answer_and_close(std::shared_ptr<Conn> conn, BeastResponse res);
};

Task<void> HttpServer::Impl::accept_loop(std::shared_ptr<Impl> self) {
  for (;;) {
    asio::any_io_executor strand = asio::make_strand(self->io);
    auto [ec, socket] = co_await self->acceptor.async_accept(strand, kTok);
    if (ec) {
      if (ec == asio::error::operation_aborted || !self->acceptor.is_open()) {
        break;
      }
      log::warn("http: accept failed: {}", ec.message());
      asio::steady_timer delay(self->acceptor_ex);
      delay.expires_after(kAcceptRetryDelay);
      auto [wec] = co_await delay.async_wait(kTok);
      (void)wec;
      continue;
    }
    if (self->open_count() >= self->connection_cap) {
      // Over the cap: a short answer and a close, written without a session (best effort: the
      // socket is non-blocking and the answer fits any send buffer).
      static constexpr std::string_view k503 =
          "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: "
          "25\r\nconnection: close\r\n\r\ntoo many open connections";
      beast::error_code wec;
      socket.non_blocking(true, wec);
      socket.write_some(asio::buffer(k503.data(), k503.size()), wec);
      socket.shutdown(tcp::socket::shutdown_both, wec);
      socket.close(wec);
      if (!self->cap_warned.exchange(true)) {
        log::warn("http: {} connections open, the cap: new ones are answered 503",
                  self->connection_cap);
      }
      continue;
    }
    self->cap_warned = false;
    auto ex = socket.get_executor();
    util::spawn(ex, session(self, std::move(socket)), "http connection");
  }
  log::debug("http: accept loop ended");
}

Task<HttpResponse> HttpServer::Impl::run_handler(std::shared_ptr<Impl> self, HttpRequest req) {
  if (!self->handlers.on_http) {
    HttpResponse res;
    res.status = 404;
    co_return res;
  }
  std::optional<HttpResponse> out;
  try {
    auto task = self->handlers.on_http(std::move(req));
    out = co_await std::move(task);
  } catch (const std::exception& e) {
    log::error("http: handler failed: {}", e.what());
  } catch (...) {
    log::error("http: handler failed: unknown exception");
  }
  if (!out) {
    out = internal_error_response();
  }
  co_return std::move(*out);
}

Task<void> HttpServer::Impl::fail_and_close(std::shared_ptr<Conn> conn,
                                            unsigned status,
                                            unsigned version) {
  BeastResponse res;
  res.version(version == 10 ? 10 : 11);
  res.result(status);
  res.set(http::field::content_type, "text/plain");
  res.body() = std::string(http::obsolete_reason(static_cast<http::status>(status)));
  res.content_length(res.body().size());
  res.keep_alive(false);
  auto op = answer_and_close(std::move(conn), std::move(res));
  co_await std::move(op);
}

Task<void> HttpServer::Impl::answer_and_close(std::shared_ptr<Conn> conn, BeastResponse res) {
  res.keep_alive(false);
  conn->stream.expires_after(kErrorWriteTimeout);
  auto [ec, n] = co_await http::async_write(conn->stream, res, kTok);
  bytes_sent().inc(n);
  if (ec) {
    conn->stream.close();
    co_return;
  }
  // Lingering close: stop sending, then drain (bounded) until the client closes.
  beast::error_code sec;
  conn->stream.socket().shutdown(tcp::socket::shutdown_send, sec);
  conn->stream.expires_after(kLingerTimeout);
  std::array<char, 16384> scratch{};
  std::size_t drained = 0;
  while (drained < kLingerMaxBytes) {
    auto [rec, rn] = co_await conn->stream.async_read_some(asio::buffer(scratch), kTok);
    if (rec) {
      break;
    }
    drained += rn;
  }
  conn->stream.close();
}

Task<void> HttpServer::Impl::session(std::shared_ptr<Impl> self, tcp::socket socket) {
  beast::error_code opt_ec;
  socket.set_option(tcp::no_delay(true), opt_ec);
  std::string remote;
  if (auto ep = socket.remote_endpoint(opt_ec); !opt_ec) {
    remote = ep.address().to_string();
  }
  auto conn = std::make_shared<Conn>(std::move(socket), std::move(remote));
  ConnRegistration registration{self, self->add_conn(conn)};
  const auto& config = self->config;

  beast::flat_buffer buffer;
  for (;;) {
    if (conn->closing) {
      break;
    }
    // Idle wait: the connection may sit here between keep-alive requests.
    if (buffer.size() == 0) {
      conn->stream.expires_after(config.idle_timeout);
      auto [ec, n] = co_await conn->stream.async_read_some(buffer.prepare(kFirstReadBytes), kTok);
      if (ec) {
        break;
      }
      buffer.commit(n);
    }

    http::request_parser<http::string_body> parser;
    parser.header_limit(self->header_limit());
    parser.body_limit(static_cast<std::uint64_t>(config.max_body_bytes));

    conn->stream.expires_after(config.header_timeout);
    {
      auto [ec, n] = co_await http::async_read_header(conn->stream, buffer, parser, kTok);
      bytes_received().inc(n);
      if (ec) {
        if (const unsigned status = status_for_read_error(ec); status != 0 && !conn->closing) {
          auto op = fail_and_close(conn, status, 11);
          co_await std::move(op);
        }
        break;
      }
    }
    if (const unsigned status = framing_error_status(parser); status != 0) {
      if (!conn->closing) {
        auto op = fail_and_close(conn, status, parser.get().version());
        co_await std::move(op);
      }
      break;
    }

    // An answer the handler gives from the head alone (before any limit): the body is never read.
    if (self->handlers.answer_head && !parser.is_done() && !conn->closing) {
      std::optional<HttpResponse> early;
      try {
        early = self->handlers.answer_head(to_request(parser.get(), conn->remote));
      } catch (const std::exception& e) {
        log::error("http: answer_head failed: {}", e.what());
        early = internal_error_response();
      }
      if (early) {
        bool keep_alive = false;
        auto op = answer_and_close(
            conn, to_beast_response(std::move(*early), parser.get().version(), false, keep_alive));
        co_await std::move(op);
        break;
      }
    }

    // The route's own limit, known from the target: checked against a declared length before
    // anything of the body is read or buffered.
    if (self->handlers.body_limit && !parser.is_done()) {
      const auto& h = parser.get();
      const std::size_t limit = std::min(
          self->handlers.body_limit(std::string_view(h.target().data(), h.target().size())),
          config.max_body_bytes);
      const auto declared = parser.content_length();
      if (declared && *declared > limit) {
        if (!conn->closing) {
          auto op = fail_and_close(conn, 413, h.version());
          co_await std::move(op);
        }
        break;
      }
      parser.body_limit(static_cast<std::uint64_t>(limit));
    }

    // Expect: 100-continue (only meaningful when a body follows).
    if (!parser.is_done() && parser.get().version() >= 11) {
      auto it = parser.get().find(http::field::expect);
      if (it != parser.get().end() && iequals(it->value(), "100-continue")) {
        static constexpr std::string_view k100 = "HTTP/1.1 100 Continue\r\n\r\n";
        conn->stream.expires_after(config.idle_timeout);
        auto [ec, n] = co_await asio::async_write(conn->stream, asio::buffer(k100), kTok);
        bytes_sent().inc(n);
        if (ec) {
          break;
        }
      }
    }

    // Body: an inactivity timeout renewed after every read, within one deadline for the whole
    // body (a body that trickles in byte by byte would otherwise hold its buffer for ever).
    bool failed = false;
    const auto body_deadline = std::chrono::steady_clock::now() + config.body_timeout;
    while (!parser.is_done()) {
      conn->stream.expires_at(
          std::min(body_deadline, std::chrono::steady_clock::now() + config.idle_timeout));
      auto [ec, n] = co_await http::async_read_some(conn->stream, buffer, parser, kTok);
      bytes_received().inc(n);
      if (ec) {
        if (const unsigned status = status_for_read_error(ec); status != 0 && !conn->closing) {
          auto op = fail_and_close(conn, status, parser.get().version());
          co_await std::move(op);
        }
        failed = true;
        break;
      }
    }
    if (failed) {
      break;
    }
    conn->stream.expires_never();

    BeastRequest req = parser.release();
    if (self->draining.load()) {
      // Shutting down: no new work, but an answer RivetKit's client retries on, which gives it a
      // better chance than a refused connection (after which it stops trying, §8.3).
      if (beast::websocket::is_upgrade(req) && self->handlers.on_websocket) {
        conn->closing = true;  // accepted, then closed with going-away at once
        auto ws_task = serve_websocket(self, conn, std::move(req));
        co_await std::move(ws_task);
        break;
      }
      auto op = fail_and_close(conn, 503, req.version());
      co_await std::move(op);
      break;
    }
    if (beast::websocket::is_upgrade(req)) {
      if (self->handlers.on_websocket) {
        auto ws_task = serve_websocket(self, conn, std::move(req));
        co_await std::move(ws_task);
        break;  // the socket belonged to the WebSocket
      }
      // No WebSocket handler: fall through and let on_http answer the request.
    }

    const unsigned version = req.version();
    const bool head = req.method() == http::verb::head;
    bool keep_alive = req.keep_alive();
    HttpRequest request = to_request(req, conn->remote);
    request.body = std::move(req.body());

    conn->busy = true;
    auto handler = run_handler(self, std::move(request));
    HttpResponse response = co_await std::move(handler);
    if (response.stream && !head && response.status >= 200 && response.status <= 299
        && !conn->closing) {
      auto stream_op = write_streamed(conn, std::move(response), version, config.idle_timeout);
      co_await std::move(stream_op);
      conn->busy = false;
      beast::error_code sec;
      conn->stream.socket().shutdown(tcp::socket::shutdown_send, sec);
      break;
    }
    keep_alive = keep_alive && !conn->closing;
    BeastResponse res = to_beast_response(std::move(response), version, head, keep_alive);

    conn->stream.expires_after(config.idle_timeout);
    auto [ec, n] = co_await http::async_write(conn->stream, res, kTok);
    bytes_sent().inc(n);
    conn->busy = false;
    if (ec) {
      log::debug("http: response dropped: {}", ec.message());
      break;
    }
    if (!keep_alive) {
      beast::error_code sec;
      conn->stream.socket().shutdown(tcp::socket::shutdown_send, sec);
      break;
    }
  }
  if (!conn->upgraded) {
    conn->stream.close();
  }
}

Task<void> HttpServer::Impl::serve_websocket(std::shared_ptr<Impl> self,
                                             std::shared_ptr<Conn> conn,
                                             BeastRequest req) {
  HttpRequest request = to_request(req, conn->remote);
  WsAccept accept;
  bool accepted = true;
  if (self->handlers.accept_websocket) {
    try {
      accept = self->handlers.accept_websocket(request);
    } catch (const std::exception& e) {
      log::error("websocket: accept_websocket failed: {}", e.what());
      accepted = false;
    } catch (...) {
      log::error("websocket: accept_websocket failed: unknown exception");
      accepted = false;
    }
  }
  if (!accepted) {
    bool keep_alive = false;
    BeastResponse res =
        to_beast_response(internal_error_response(), req.version(), false, keep_alive);
    conn->stream.expires_after(kErrorWriteTimeout);
    auto [ec, n] = co_await http::async_write(conn->stream, res, kTok);
    bytes_sent().inc(n);
    (void)ec;
    conn->stream.close();
    co_return;
  }

  detail::WsAcceptOptions options;
  options.subprotocol = std::move(accept.subprotocol);
  options.extra_headers = std::move(accept.extra_headers);
  options.max_message_bytes = accept.max_message_bytes.value_or(self->config.max_ws_message_bytes);
  options.max_send_backlog_bytes = self->config.max_ws_send_backlog_bytes;
  options.send_stall_timeout = self->config.ws_send_stall_timeout;
  options.handshake_timeout = self->config.header_timeout;
  conn->upgraded = true;
  auto accept_op =
      detail::accept_server_websocket(std::move(conn->stream), std::move(req), std::move(options));
  std::shared_ptr<WebSocket> ws = co_await std::move(accept_op);
  if (!ws) {
    co_return;
  }
  conn->ws = ws;
  if (conn->closing) {
    ws->close(kCloseGoingAway, std::string(kGoingAwayReason));
  }

  bool threw = false;
  try {
    auto task = self->handlers.on_websocket(std::move(request), ws);
    co_await std::move(task);
  } catch (const std::exception& e) {
    log::error("websocket: handler failed: {}", e.what());
    threw = true;
  } catch (...) {
    log::error("websocket: handler failed: unknown exception");
    threw = true;
  }
  // The handler owns the socket until it returns: close it if it did not (no-op otherwise).
  if (threw) {
    ws->close(kCloseInternalError, std::string(kInternalErrorReason));
  } else {
    ws->close(kCloseNormal, std::string());
  }
}

HttpServer::HttpServer(asio::io_context& io, HttpServerConfig config, HttpHandlers handlers)
    : impl_(std::make_shared<Impl>(io, std::move(config), std::move(handlers))) {}

HttpServer::~HttpServer() {
  stop_accepting();
  close_all();
}

Result<std::uint16_t> HttpServer::listen(const std::string& host, std::uint16_t port) {
  auto fail_with = [](std::string code, std::string message) {
    return fail(Error{"net", std::move(code), std::move(message), std::nullopt, false});
  };
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->listening) {
      return fail_with("already_listening", "the server is already listening");
    }
    impl_->listening = true;
  }
  beast::error_code ec;
  // Numeric addresses only, plus "localhost" (no DNS lookups here).
  const auto address =
      asio::ip::make_address(iequals(host, "localhost") ? std::string("127.0.0.1") : host, ec);
  if (ec) {
    std::lock_guard lock(impl_->mu);
    impl_->listening = false;
    return fail_with("invalid_address", "invalid listen address '" + host + "': " + ec.message());
  }
  const tcp::endpoint endpoint(address, port);
  auto& acceptor = impl_->acceptor;
  auto undo = [&](const char* what) {
    const std::string msg = std::string(what) + " " + endpoint.address().to_string() + ":"
                            + std::to_string(port) + ": " + ec.message();
    beast::error_code ignored;
    acceptor.close(ignored);
    std::lock_guard lock(impl_->mu);
    impl_->listening = false;
    return fail_with("listen_failed", msg);
  };
  if (acceptor.open(endpoint.protocol(), ec); ec) {
    return undo("open");
  }
  if (acceptor.set_option(asio::socket_base::reuse_address(true), ec); ec) {
    return undo("set reuse_address on");
  }
  if (acceptor.bind(endpoint, ec); ec) {
    return undo("bind");
  }
  if (acceptor.listen(asio::socket_base::max_listen_connections, ec); ec) {
    return undo("listen on");
  }
  const auto bound = acceptor.local_endpoint(ec);
  if (ec) {
    return undo("local_endpoint of");
  }
  util::spawn(impl_->acceptor_ex, Impl::accept_loop(impl_), "http accept loop");
  log::debug("http: listening on {}:{}", host, bound.port());
  return bound.port();
}

void HttpServer::stop_accepting() {
  asio::post(impl_->acceptor_ex, [impl = impl_] {
    beast::error_code ec;
    impl->acceptor.close(ec);
  });
}

void HttpServer::drain() {
  impl_->draining = true;
}

std::size_t HttpServer::open_connections() const {
  std::lock_guard lock(impl_->mu);
  return impl_->conns.size();
}

void HttpServer::close_all() {
  std::vector<std::shared_ptr<Conn>> live;
  {
    std::lock_guard lock(impl_->mu);
    live.reserve(impl_->conns.size());
    for (auto& [id, weak] : impl_->conns) {
      if (auto c = weak.lock()) {
        live.push_back(std::move(c));
      }
    }
  }
  for (auto& c : live) {
    asio::post(c->ex, [c] {
      c->closing = true;
      if (c->ws) {
        c->ws->close(kCloseGoingAway, std::string(kGoingAwayReason));
      } else if (!c->upgraded && !c->busy) {
        c->stream.cancel();
      }
    });
  }
}

}  // namespace rivetkit::net
