// HTTP/1.1 client: URL parsing, TCP connect with a deadline (shared with ws_client.cpp) and one
// request/response exchange. The only TU that instantiates Beast's request write and response
// read operations (cpp-guide §2.1).

#include "net/http_client.hpp"

#include "util/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <charconv>
#include <memory>
#include <utility>
#include <vector>

namespace rivetkit::net {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

constexpr auto kTok = asio::as_tuple(asio::use_awaitable);
constexpr std::uint64_t kMaxResponseBody = 64u << 20;
constexpr std::uint32_t kMaxResponseHeader = 64u << 10;

char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), ascii_lower);
  return out;
}

std::uint16_t default_port(std::string_view scheme) {
  return (scheme == "https" || scheme == "wss") ? std::uint16_t{443} : std::uint16_t{80};
}

bool valid_header_name(std::string_view name) {
  if (name.empty()) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7F && c != ':';
  });
}

bool valid_header_value(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

/// Headers the client sets itself; a caller's copy is ignored.
bool reserved_header(std::string_view lower_name) {
  return lower_name == "host" || lower_name == "content-length" || lower_name == "connection"
         || lower_name == "transfer-encoding";
}

Task<Result<HttpResponse>> do_request(asio::any_io_executor strand, HttpClientRequest req) {
  auto url = parse_client_url(req.url);
  if (!url) {
    co_return fail(url.error());
  }
  if (url->scheme != "http") {
    co_return fail(detail::net_error(
        "invalid_url", "http_request supports http:// URLs only, got '" + req.url + "'"));
  }
  if (!valid_header_name(req.method)) {
    co_return fail(
        detail::net_error("invalid_request", "invalid HTTP method '" + req.method + "'"));
  }

  http::request<http::string_body> out;
  out.method_string(req.method);
  out.target(url->target);
  out.version(11);
  out.set(http::field::host, url->host_header());
  for (const auto& h : req.headers) {
    if (!valid_header_name(h.name) || !valid_header_value(h.value)) {
      co_return fail(
          detail::net_error("invalid_request", "invalid request header '" + h.name + "'"));
    }
    if (reserved_header(lower(h.name))) {
      continue;
    }
    out.insert(h.name, h.value);
  }
  out.set(http::field::connection, "close");
  out.body() = std::move(req.body);
  out.prepare_payload();

  const auto deadline = std::chrono::steady_clock::now() + req.timeout;
  auto connect_op = detail::connect_tcp(strand, *url, deadline);
  auto socket = co_await std::move(connect_op);
  if (!socket) {
    co_return fail(socket.error());
  }
  beast::tcp_stream stream(std::move(*socket));
  stream.expires_at(deadline);

  auto io_error = [&](const beast::error_code& ec, const char* what) {
    if (ec == beast::error::timeout) {
      return detail::net_error("timeout", "HTTP " + req.method + " " + req.url + " timed out after "
                                              + std::to_string(req.timeout.count()) + " ms");
    }
    return detail::net_error("io_failed", std::string(what) + " for HTTP " + req.method + " "
                                              + req.url + " failed: " + ec.message());
  };

  {
    auto [ec, n] = co_await http::async_write(stream, out, kTok);
    (void)n;
    if (ec) {
      co_return fail(io_error(ec, "writing the request"));
    }
  }

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBody);
  parser.header_limit(kMaxResponseHeader);
  if (out.method() == http::verb::head) {
    parser.skip(true);
  }
  {
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, kTok);
    (void)n;
    if (ec) {
      co_return fail(io_error(ec, "reading the response"));
    }
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream.close();

  auto& res = parser.get();
  HttpResponse response;
  response.status = res.result_int();
  for (const auto& f : res) {
    response.headers.push_back(Header{lower(f.name_string()), std::string(f.value())});
  }
  response.body = std::move(res.body());
  co_return response;
}

}  // namespace

std::string ClientUrl::host_header() const {
  std::string out = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != default_port(scheme)) {
    out += ":" + std::to_string(port);
  }
  return out;
}

Result<ClientUrl> parse_client_url(std::string_view url) {
  auto invalid = [&](std::string_view why) {
    return fail(detail::net_error("invalid_url",
                                  "invalid URL '" + std::string(url) + "': " + std::string(why)));
  };
  const auto sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) {
    return invalid("missing scheme");
  }
  ClientUrl out;
  out.scheme = lower(url.substr(0, sep));
  if (out.scheme != "http" && out.scheme != "https" && out.scheme != "ws" && out.scheme != "wss") {
    return invalid("unsupported scheme '" + out.scheme + "'");
  }
  std::string_view rest = url.substr(sep + 3);
  if (const auto hash = rest.find('#'); hash != std::string_view::npos) {
    rest = rest.substr(0, hash);
  }
  const auto auth_end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, auth_end);
  const std::string_view target =
      auth_end == std::string_view::npos ? std::string_view() : rest.substr(auth_end);
  if (authority.find('@') != std::string_view::npos) {
    return invalid("user information is not supported");
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return invalid("unterminated IPv6 address");
    }
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return invalid("garbage after the IPv6 address");
      }
      port_text = after.substr(1);
      if (port_text.empty()) {
        return invalid("empty port");
      }
    }
  } else {
    const auto colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      authority = authority.substr(0, colon);
      if (port_text.empty()) {
        return invalid("empty port");
      }
    }
    out.host = std::string(authority);
  }
  if (out.host.empty()) {
    return invalid("empty host");
  }
  if (port_text.empty()) {
    out.port = default_port(out.scheme);
  } else {
    unsigned value = 0;
    const auto* end = port_text.data() + port_text.size();
    const auto [ptr, ec] = std::from_chars(port_text.data(), end, value);
    if (ec != std::errc() || ptr != end || value == 0 || value > 65535) {
      return invalid("bad port '" + std::string(port_text) + "'");
    }
    out.port = static_cast<std::uint16_t>(value);
  }
  if (target.empty()) {
    out.target = "/";
  } else if (target.front() == '?') {
    out.target = "/" + std::string(target);
  } else {
    out.target = std::string(target);
  }
  return out;
}

namespace detail {

Error net_error(std::string code, std::string message) {
  return Error{"net", std::move(code), std::move(message), std::nullopt, false};
}

Task<Result<tcp::socket>> connect_tcp(asio::any_io_executor strand,
                                      ClientUrl url,
                                      std::chrono::steady_clock::time_point deadline) {
  // Shared with the deadline watchdog, which may run after this frame is gone.
  struct State {
    explicit State(const asio::any_io_executor& ex) : resolver(ex), socket(ex) {}
    tcp::resolver resolver;
    tcp::socket socket;
    bool done = false;
    bool timed_out = false;
  };
  auto st = std::make_shared<State>(strand);
  const std::string where = url.host + ":" + std::to_string(url.port);

  asio::steady_timer watchdog(strand, deadline);
  watchdog.async_wait([st](const boost::system::error_code& ec) {
    if (ec || st->done) {
      return;
    }
    st->timed_out = true;
    st->resolver.cancel();
    boost::system::error_code ignored;
    st->socket.close(ignored);
  });
  auto timeout_error = [&] {
    return net_error("timeout", "connecting to " + where + " timed out");
  };

  std::vector<tcp::endpoint> endpoints;
  boost::system::error_code aec;
  const auto address = asio::ip::make_address(url.host, aec);
  if (!aec) {
    endpoints.emplace_back(address, url.port);
  } else {
    auto [ec, results] =
        co_await st->resolver.async_resolve(url.host, std::to_string(url.port), kTok);
    if (st->timed_out) {
      st->done = true;
      co_return fail(timeout_error());
    }
    if (ec || results.empty()) {
      st->done = true;
      co_return fail(net_error("resolve_failed", "cannot resolve '" + url.host
                                                     + "': " + (ec ? ec.message() : "no address")));
    }
    for (const auto& entry : results) {
      endpoints.push_back(entry.endpoint());
    }
  }

  auto [ec, endpoint] = co_await asio::async_connect(st->socket, endpoints, kTok);
  (void)endpoint;
  st->done = true;
  watchdog.cancel();
  if (st->timed_out) {
    co_return fail(timeout_error());
  }
  if (ec) {
    co_return fail(net_error("connect_failed", "cannot connect to " + where + ": " + ec.message()));
  }
  boost::system::error_code opt_ec;
  st->socket.set_option(tcp::no_delay(true), opt_ec);
  if (opt_ec) {
    log::debug("http client: TCP_NODELAY not set: {}", opt_ec.message());
  }
  co_return std::move(st->socket);
}

}  // namespace detail

Task<Result<HttpResponse>> http_request(boost::asio::any_io_executor ex, HttpClientRequest req) {
  asio::any_io_executor strand = asio::make_strand(ex);
  auto op = do_request(strand, std::move(req));
  co_return co_await asio::co_spawn(strand, std::move(op), asio::use_awaitable);
}

}  // namespace rivetkit::net
