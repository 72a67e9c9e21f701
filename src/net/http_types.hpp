#pragma once
// Plain HTTP request/response values exchanged between the transport (this module) and the
// layers above. No Beast types leak out of src/net (cpp-guide §2.1).

#include <cstdint>
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

struct HttpResponse {
  unsigned status = 200;
  Headers headers;
  std::string body;

  void set_header(std::string name, std::string value);
};

}  // namespace rivetkit::net
