#pragma once
// Plain JSON <-> Value. No RivetKit tagging here; see compat.hpp for the `$BigInt`-style forms.
//
// Parsing: integers that fit int64 become Kind::kInt, other numbers Kind::kDouble (JS semantics).
// Duplicate object keys keep the last value. Depth is bounded by DecodeLimits.
// Stringify follows JSON.stringify: undefined is dropped from objects and becomes null in arrays
// (and at top level); NaN/Infinity become null; doubles use JavaScript's shortest round-trip
// formatting (1.5, 1e+21, 1e-7, 4294967296). BigInt is written as its decimal digits and Bytes as
// ["$Uint8Array","<base64>"]; callers normally apply compat_encode first so neither appears.

#include "protocol/limits.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/value.hpp>

#include <string>
#include <string_view>

namespace rivetkit::protocol {

Result<Value> json_parse(std::string_view text, const DecodeLimits& limits = {});
std::string json_stringify(const Value& v);
void json_stringify_to(const Value& v, std::string& out);

}  // namespace rivetkit::protocol
