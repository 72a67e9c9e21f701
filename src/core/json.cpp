// Implementation of the public JSON helpers (include/rivetkit/json.hpp).
#include <rivetkit/json.hpp>

#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"

namespace rivetkit {

std::string to_json(const Value& v) {
  return protocol::json_stringify(protocol::compat_encode(v, protocol::CompatMode::kJson));
}

Result<Value> parse_json(std::string_view text) {
  auto parsed = protocol::json_parse(text);
  if (!parsed) {
    return parsed;
  }
  return protocol::compat_decode(*parsed);
}

}  // namespace rivetkit
