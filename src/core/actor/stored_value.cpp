#include "core/actor/stored_value.hpp"

#include "protocol/cbor/cbor.hpp"
#include "protocol/compat.hpp"

namespace rivetkit::core {

Result<Value> decode_stored(const std::string& bytes) {
  auto raw = protocol::cbor_decode(bytes);
  if (!raw) {
    return fail(raw.error());
  }
  return protocol::compat_decode(*raw);
}

std::string encode_stored(const Value& v) {
  return protocol::cbor_encode(protocol::compat_encode(v, protocol::CompatMode::kCbor));
}

}  // namespace rivetkit::core
