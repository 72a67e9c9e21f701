#pragma once
// How the runtime stores user values (state, connection params and state, schedule arguments):
// CBOR in RivetKit's compat encoding, the bytes RivetKit itself persists.

#include <rivetkit/result.hpp>
#include <rivetkit/value.hpp>

#include <string>

namespace rivetkit::core {

std::string encode_stored(const Value& v);
Result<Value> decode_stored(const std::string& bytes);

}  // namespace rivetkit::core
