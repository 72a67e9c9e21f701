#pragma once
// Building blocks shared by the client protocol codecs (internal to src/protocol/client).

#include "protocol/bare/bare.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/limits.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace rivetkit::protocol::client::detail {

/// Oldest BARE client-protocol version we still decode (client-protocol.md §7.3).
inline constexpr std::uint16_t kOldestVersion = 1;

// ---- JSON / CBOR envelopes -------------------------------------------------------------------

/// Parses a JSON or CBOR body/frame into a Value (e must not be kBare).
Result<Value> parse_document(Encoding e, std::string_view bytes, const DecodeLimits& limits);
/// parse_document, and the root must be an object (else "`what` must be an object, got ...").
Result<Value> parse_object(Encoding e,
                           std::string_view bytes,
                           const DecodeLimits& limits,
                           std::string_view what);
/// Serializes a JSON or CBOR envelope (e must not be kBare).
std::string serialize_document(Encoding e, const Value& v);

/// `what` must be an object; returns it or an invalid_request error naming `what`.
Result<const Value*> expect_object(const Value* v, std::string_view what);
/// A required string member.
Result<std::string> required_string(const Value& obj, std::string_view key, std::string_view what);
/// A required boolean member.
Result<bool> required_bool(const Value& obj, std::string_view key, std::string_view what);
/// True when the member is absent, null or undefined (all mean "not given" on the wire).
bool is_absent(const Value* member);

/// An unsigned id: a plain non-negative integer, a bigint, or the compat ["$BigInt","n"].
Result<std::uint64_t> read_uint(const Value& v, std::string_view what);

/// The JSON id form the TS client's zod schema requires: ["$BigInt","n"].
Value json_bigint(std::uint64_t v);
/// The CBOR id form: a BigInt, which cbor_encode writes with the 8-byte head cbor-x reads as a
/// bigint.
Value cbor_bigint(std::uint64_t v);

/// The JSON/CBOR frame envelope of a /connect message: {"body": {"tag": tag, "val": val}}.
Value envelope(std::string_view tag, Value val);

/// Compat-tags an outgoing user value for the JSON or CBOR transport.
Value user_value_out(Encoding e, const Value& v);
/// The same for a member the client requires (an action's `output`): JSON has no undefined, so a
/// top-level undefined becomes null there (as rivetkit-core answers a void action), never an
/// absent member, which the TS client rejects.
Value required_user_value_out(Encoding e, const Value& v);

/// Action arguments from the `args` value (after revival): an array is the list, null/undefined
/// means none, anything else is one argument.
Array normalize_args(Value args);

// ---- BARE ------------------------------------------------------------------------------------

/// Reads the u16 LE version prefix and checks it is 1..4.
Result<std::uint16_t> read_version(bare::Reader& r, std::string_view what);
/// Writes the current version prefix (always 4).
void write_version(bare::Writer& w);
/// The error for a BARE field that is truncated or malformed.
tl::unexpected<Error> bare_field_error(std::string_view what, std::string_view field);
/// Fails unless the whole input has been consumed.
Result<void> expect_end(const bare::Reader& r, std::string_view what);

/// Decodes a compat-CBOR `data` payload: cbor-x bytes followed by compat revival. Empty data is
/// null, as rivetkit-core reads it.
Result<Value> decode_compat_cbor(std::string_view bytes, const DecodeLimits& limits);
/// Compat-CBOR of an outgoing user value (encodeCborCompat).
std::string encode_compat_cbor(const Value& v);

}  // namespace rivetkit::protocol::client::detail
