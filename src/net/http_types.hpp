#pragma once
// Plain HTTP request/response values exchanged between the transport (this module) and the
// layers above. No Beast types leak out of src/net (cpp-guide §2.1).

#include <rivetkit/task.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::net {

struct Header {
  std::string name;  // lower-case
  std::string value;
};
using Headers = std::vector<Header>;

/// First header with this (lower-case) name, or nullopt.
std::optional<std::string_view> find_header(const Headers& headers, std::string_view name);
/// `value` without leading and trailing spaces and tabs (a header value's optional whitespace).
std::string_view trim_ows(std::string_view value);

struct HttpRequest {
  std::string method;  // "GET", "POST", ... as sent
  std::string target;  // origin-form: path plus optional "?query", undecoded
  Headers headers;     // names lower-cased, in arrival order
  std::string body;    // fully buffered (chunked bodies are reassembled)
  std::string remote_address;

  std::optional<std::string_view> header(std::string_view name) const {
    return find_header(headers, name);
  }
};

/// The body of a streamed response, written piece by piece (e.g. server-sent events).
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  /// Sends `data` now; false once the client is gone (or the server closes), after which
  /// nothing more is sent.
  virtual Task<bool> write(std::string data) = 0;
};

struct HttpResponse {
  unsigned status = 200;
  Headers headers;
  std::string body;
  /// Set: the body is streamed instead (chunked, then the connection closes); `body` is
  /// ignored. The server writes the head, then runs this until it returns.
  std::function<Task<void>(ResponseStream&)> stream;

  void set_header(std::string name, std::string value);
};

}  // namespace rivetkit::net
