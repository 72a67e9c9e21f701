#pragma once
// A minimal HTTP/1.1 client: one request per fresh TCP connection (engine mode's control-plane
// calls: /health, /datacenters, /runner-configs). Plain http:// only. Beast stays in
// http_client.cpp (cpp-guide §2.1).
//
// Errors are Error{group "net", code ...}:
//   invalid_url        the URL does not parse, or its scheme is not http/ws (https/wss: not yet)
//   resolve_failed     the host name did not resolve
//   connect_failed     no TCP connection (refused, unreachable, ...)
//   timeout            the whole exchange (resolve + connect + write + read) took longer than
//                      HttpClientRequest::timeout
//   io_failed          the connection broke while writing the request or reading the response,
//                      or the response was malformed (message says which)
// An HTTP error status (4xx/5xx) is NOT an error: it is returned as an HttpResponse.

#include "net/http_types.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace rivetkit::net {

struct HttpClientRequest {
  std::string method = "GET";
  std::string url;  // http://host:port/path?query (https not supported)
  Headers headers;  // extra headers (Host, Content-Length and Connection are set by the client)
  std::string body;
  std::chrono::milliseconds timeout{10'000};
};

/// Sends one request on a fresh connection (TCP_NODELAY, `Connection: close`) and reads the whole
/// response (bodies up to 64 MiB). Response header names are lower-cased, in arrival order.
/// Runs on its own strand of `ex`'s execution context; the caller resumes on its own executor.
/// Cancellation: not supported (the timeout bounds the call).
Task<Result<HttpResponse>> http_request(boost::asio::any_io_executor ex, HttpClientRequest req);

/// The parts of an absolute http/ws URL, as the clients use them.
struct ClientUrl {
  std::string scheme;      // lower-case: "http" or "ws" ("https"/"wss" parse but are not supported)
  std::string host;        // without brackets for IPv6 literals
  std::uint16_t port = 0;  // explicit, or the scheme default (80, 443)
  std::string target;      // origin-form path plus "?query"; "/" when the URL has no path
  /// Value for the Host header: host[:port] (brackets restored for IPv6; port omitted when it is
  /// the scheme default).
  std::string host_header() const;
};

/// Parses scheme://host[:port][/path][?query] (a "#fragment" is dropped). Userinfo is rejected.
/// Error: net.invalid_url.
Result<ClientUrl> parse_client_url(std::string_view url);

namespace detail {

/// Resolves `url.host` (numeric addresses skip the resolver) and connects to the first endpoint
/// that accepts, before `deadline`. The socket uses `strand` (which must be a strand: the
/// deadline watchdog runs there) and has TCP_NODELAY set. Errors: net.resolve_failed,
/// net.connect_failed, net.timeout. Shared by the HTTP and WebSocket clients.
Task<Result<boost::asio::ip::tcp::socket>> connect_tcp(
    boost::asio::any_io_executor strand,
    ClientUrl url,
    std::chrono::steady_clock::time_point deadline);

/// Error{"net", code, message}.
Error net_error(std::string code, std::string message);

}  // namespace detail

}  // namespace rivetkit::net
