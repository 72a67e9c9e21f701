#pragma once
/// JSON text <-> Value, for user code (raw HTTP bodies, logs). Plain JSON: bigint and bytes are
/// written in RivetKit's tagged form (["$BigInt","1"], ["$Uint8Array","<base64>"]) and read back
/// as such, so round trips are lossless.

#include <rivetkit/result.hpp>
#include <rivetkit/value.hpp>

#include <string>
#include <string_view>

namespace rivetkit {

std::string to_json(const Value& v);
Result<Value> parse_json(std::string_view text);

}  // namespace rivetkit
