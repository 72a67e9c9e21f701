// Encoding names and their HTTP / WebSocket presentation (client-protocol.md §6.2).

#include "protocol/client/messages.hpp"

namespace rivetkit::protocol::client {

std::optional<Encoding> parse_encoding(std::string_view name) {
  if (name == "json") {
    return Encoding::kJson;
  }
  if (name == "cbor") {
    return Encoding::kCbor;
  }
  if (name == "bare") {
    return Encoding::kBare;
  }
  return std::nullopt;
}

std::string_view encoding_name(Encoding e) {
  switch (e) {
    case Encoding::kJson:
      return "json";
    case Encoding::kCbor:
      return "cbor";
    case Encoding::kBare:
      return "bare";
  }
  return "json";
}

Encoding http_encoding_from_header(std::string_view header_value) {
  // Exact, case-sensitive match as in rivetkit-core; json is the fallback for anything else.
  if (header_value == "cbor") {
    return Encoding::kCbor;
  }
  if (header_value == "bare") {
    return Encoding::kBare;
  }
  return Encoding::kJson;
}

std::string_view content_type(Encoding e) {
  return e == Encoding::kJson ? "application/json" : "application/octet-stream";
}

bool is_text(Encoding e) {
  return e == Encoding::kJson;
}

}  // namespace rivetkit::protocol::client
