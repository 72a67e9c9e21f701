#pragma once
// RivetKit's JSON-compat tagging (client-protocol.md §7.1; npm rivetkit src/common/encoding.ts).
//
// A two-element array whose first element is a string starting with '$' is a tagged value:
//   ["$BigInt","<decimal>"]  ["$Uint8Array","<base64>"]  ["$ArrayBuffer","<base64>"]
//   ["$Undefined",0]         ["$Set",[items...]]
// A genuine user array of that shape is escaped with one more '$' (["$x",1] <-> ["$$x",1]).
//
// compat_encode turns BigInt/Bytes (and, in kCbor mode, Undefined) into tags and escapes user
// arrays; in kJson mode Undefined is left for json_stringify (JSON.stringify semantics).
// compat_decode revives tags recursively (["$Set",[...]] becomes an Array, ["$ArrayBuffer",..]
// Bytes) and un-escapes; an unknown "$tag" is an error, as it is in the TS client.

#include <rivetkit/result.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rivetkit::protocol {

enum class CompatMode { kJson, kCbor };

Value compat_encode(const Value& v, CompatMode mode);
Result<Value> compat_decode(const Value& v);

/// Standard base64 with padding (what the compat tags and REST `input` use).
std::string base64_encode(std::span<const std::uint8_t> data);
std::optional<Bytes> base64_decode(std::string_view text);
/// base64url without padding (gateway `rvt-input`). Decoding also accepts padding.
std::string base64url_encode(std::span<const std::uint8_t> data);
std::optional<Bytes> base64url_decode(std::string_view text);

}  // namespace rivetkit::protocol
