#pragma once
// UTF-8 helpers shared by the JSON, CBOR and BARE codecs. Every text string that reaches a Value
// must be valid UTF-8, because it may later be written as a JSON text frame or a BARE `str`.

#include <cstdint>
#include <string>
#include <string_view>

namespace rivetkit::protocol::text {

/// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view s);

/// Length of the valid UTF-8 sequence starting at s[0], or 0 when s does not start with one.
std::size_t utf8_sequence_length(std::string_view s);

/// Appends code point `cp` (must be a Unicode scalar value) as UTF-8.
void append_utf8(std::uint32_t cp, std::string& out);

}  // namespace rivetkit::protocol::text
