// WebSocket client: TCP connect (http_client.cpp's connect_tcp), the client opening handshake, and
// a thin owner around BeastWebSocket<PlainWsStream>. Only the client handshake is instantiated
// here; read/write/close on the plain stream come from the explicit instantiation in
// websocket.cpp (cpp-guide §2.1), so the client shares the server's send queue, close and
// receive logic.

#include "net/ws_client.hpp"

#include "net/beast_websocket.hpp"
#include "net/http_client.hpp"
#include "util/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/websocket/error.hpp>
#include <boost/beast/websocket/option.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <algorithm>
#include <utility>

namespace rivetkit::net {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace websocket = boost::beast::websocket;
using Socket = detail::BeastWebSocket<detail::PlainWsStream>;

constexpr auto kTok = asio::as_tuple(asio::use_awaitable);
/// How much of a rejected handshake's body goes into the error message.
constexpr std::size_t kMaxBodyInError = 512;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

bool valid_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7F && c != ',' && c != ':' && c != '"';
  });
}

bool valid_header_value(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

/// Request headers Beast writes itself for the opening handshake.
bool reserved_header(std::string_view lower_name) {
  return lower_name == "host" || lower_name == "upgrade" || lower_name == "connection"
         || lower_name == "sec-websocket-key" || lower_name == "sec-websocket-version"
         || lower_name == "sec-websocket-protocol" || lower_name == "sec-websocket-extensions"
         || lower_name == "content-length" || lower_name == "transfer-encoding";
}

HttpResponse to_response(const websocket::response_type& res) {
  HttpResponse out;
  out.status = res.result_int();
  for (const auto& f : res) {
    out.headers.push_back(Header{lower(f.name_string()), std::string(f.value())});
  }
  out.body = res.body();
  return out;
}

/// Owns the client socket for its user: dropping the last reference closes it (1000), so the
/// writer coroutine (which keeps the Beast socket alive) always ends.
class ClientWebSocket final : public WebSocket {
 public:
  explicit ClientWebSocket(std::shared_ptr<Socket> inner) : inner_(std::move(inner)) {}
  ~ClientWebSocket() override { inner_->close(1000, std::string()); }
  ClientWebSocket(const ClientWebSocket&) = delete;
  ClientWebSocket& operator=(const ClientWebSocket&) = delete;

  void send(WsMessage msg) override { inner_->send(std::move(msg)); }
  void close(std::uint16_t code, std::string reason) override {
    inner_->close(code, std::move(reason));
  }
  Task<std::optional<WsMessage>> receive() override { return inner_->receive(); }
  WsCloseInfo close_info() const override { return inner_->close_info(); }
  std::size_t buffered_bytes() const override { return inner_->buffered_bytes(); }

 private:
  std::shared_ptr<Socket> inner_;
};

Task<Result<std::shared_ptr<WebSocket>>> do_connect(asio::any_io_executor strand,
                                                    WsConnectOptions opts) {
  auto url = parse_client_url(opts.url);
  if (!url) {
    co_return fail(url.error());
  }
  if (url->scheme != "ws" && url->scheme != "http") {
    co_return fail(detail::net_error(
        "invalid_url", "connect_websocket supports ws:// URLs only, got '" + opts.url + "'"));
  }
  std::string protocols;
  for (const auto& p : opts.subprotocols) {
    if (!valid_token(p)) {
      co_return fail(detail::net_error("invalid_request", "invalid subprotocol '" + p + "'"));
    }
    protocols += protocols.empty() ? p : ", " + p;
  }
  Headers extra;
  for (const auto& h : opts.headers) {
    if (!valid_token(h.name) || !valid_header_value(h.value)) {
      co_return fail(
          detail::net_error("invalid_request", "invalid request header '" + h.name + "'"));
    }
    if (!reserved_header(lower(h.name))) {
      extra.push_back(h);
    }
  }

  const auto deadline = std::chrono::steady_clock::now() + opts.timeout;
  auto connect_op = detail::connect_tcp(strand, *url, deadline);
  auto tcp = co_await std::move(connect_op);
  if (!tcp) {
    co_return fail(tcp.error());
  }
  const auto remaining = deadline - std::chrono::steady_clock::now();
  if (remaining <= std::chrono::steady_clock::duration::zero()) {
    co_return fail(detail::net_error("timeout", "websocket connect to " + opts.url + " timed out"));
  }

  auto socket = std::make_shared<Socket>(detail::PlainWsStream(beast::tcp_stream(std::move(*tcp))));
  detail::PlainWsStream& ws = socket->stream();
  // The websocket stream has its own timeouts; the tcp_stream deadline must stay off.
  beast::get_lowest_layer(ws).expires_never();
  // handshake_timeout bounds the opening handshake now and the closing handshake later.
  ws.set_option(detail::ws_timeouts(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(remaining)));
  ws.read_message_max(opts.max_message_size);
  ws.auto_fragment(false);
  ws.set_option(websocket::stream_base::decorator(
      [protocols, extra = std::move(extra)](websocket::request_type& req) {
        if (!protocols.empty()) {
          req.set(http::field::sec_websocket_protocol, protocols);
        }
        for (const auto& h : extra) {
          req.insert(h.name, h.value);
        }
      }));

  websocket::response_type res;
  auto [ec] = co_await ws.async_handshake(res, url->host_header(), url->target, kTok);
  if (ec) {
    beast::error_code ignored;
    beast::get_lowest_layer(ws).socket().close(ignored);
    if (ec == websocket::error::upgrade_declined) {
      const unsigned status = res.result_int();
      std::string body = res.body().substr(0, kMaxBodyInError);
      Error e = detail::net_error("handshake_rejected",
                                  "websocket handshake to " + opts.url + " rejected with HTTP "
                                      + std::to_string(status) + " " + std::string(res.reason())
                                      + (body.empty() ? std::string() : ": " + body));
      e.metadata = Value::object({{"status", Value(status)}});
      co_return fail(std::move(e));
    }
    if (ec == beast::error::timeout) {
      co_return fail(
          detail::net_error("timeout", "websocket handshake with " + opts.url + " timed out"));
    }
    co_return fail(detail::net_error(
        "handshake_failed", "websocket handshake with " + opts.url + " failed: " + ec.message()));
  }

  if (auto chosen = res.find(http::field::sec_websocket_protocol); chosen != res.end()) {
    const std::string name = trim(chosen->value());
    if (std::find(opts.subprotocols.begin(), opts.subprotocols.end(), name)
        == opts.subprotocols.end()) {
      beast::error_code ignored;
      beast::get_lowest_layer(ws).socket().close(ignored);
      co_return fail(detail::net_error(
          "handshake_failed", "websocket server at " + opts.url
                                  + " chose a subprotocol that was not offered: '" + name + "'"));
    }
  }

  socket->start();
  auto client = std::make_shared<ClientWebSocket>(socket);
  if (opts.on_handshake_response) {
    opts.on_handshake_response(to_response(res));
  }
  co_return std::shared_ptr<WebSocket>(std::move(client));
}

}  // namespace

Task<Result<std::shared_ptr<WebSocket>>> connect_websocket(boost::asio::any_io_executor ex,
                                                           WsConnectOptions opts) {
  asio::any_io_executor strand = asio::make_strand(ex);
  auto op = do_connect(strand, std::move(opts));
  co_return co_await asio::co_spawn(strand, std::move(op), asio::use_awaitable);
}

}  // namespace rivetkit::net
