#pragma once
/// HTTP request/response values seen by user hooks: `onRequest` (raw HTTP), and the request that
/// opened a connection (`onBeforeConnect`, `createConnState`, `onWebSocket`).

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rivetkit {

struct HttpHeader {
  std::string name;  // lower-case
  std::string value;
};

struct Request {
  std::string method;  // "GET", "POST", ...
  /// Path as the actor sees it: for raw requests the `/request` prefix is removed
  /// (`/request/hello/world?x=1` -> path "/hello/world", search "?x=1").
  std::string path;
  /// Query string including the leading '?', or empty.
  std::string search;
  /// The full URL as the actor sees it: `http://actor` + path + search (RivetKit's request.url).
  std::string url() const { return "http://actor" + path + search; }
  std::vector<HttpHeader> headers;
  std::string body;

  /// First header with this name (case-insensitive), or nullopt.
  std::optional<std::string_view> header(std::string_view name) const;
};

struct Response {
  unsigned status = 200;
  std::vector<HttpHeader> headers;
  std::string body;

  Response() = default;
  Response(unsigned status_code, std::string body_text)
      : status(status_code), body(std::move(body_text)) {}

  Response& set_header(std::string name, std::string value);

  /// 200 with `content-type: application/json` and the given JSON text.
  static Response json(std::string json_text, unsigned status = 200);
  /// 200 with `content-type: text/plain; charset=utf-8`.
  static Response text(std::string text, unsigned status = 200);
};

}  // namespace rivetkit
