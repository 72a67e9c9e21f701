#pragma once
// CBOR (RFC 8949) <-> Value, compatible with what cbor-x 1.6 (used by the TS clients) writes and
// reads (client-protocol.md §7.2).
//
// Decoding accepts: non-minimal lengths (b9 LLLL maps), indefinite-length strings/arrays/maps,
// half/single/double floats, undefined (f7), tags 2/3 (bignums -> BigInt), 64..87 (typed arrays ->
// Bytes of the raw payload), 258 (set -> Array), 259 (map -> Object; non-string keys are
// stringified like JS property keys, byte-string keys are rejected), 0/1 (dates -> inner value),
// unknown tags (-> inner value). Integers with an 8-byte argument (1b/3b) decode as BigInt,
// because cbor-x decodes exactly that form as a JS bigint; shorter forms decode as Int. Integers
// outside int64 decode as BigInt. The whole input must be exactly one item.
//
// Encoding (minimal heads throughout):
// - Int: integer head if -2^32 <= v < 2^32 (cbor-x's range); float64 if |v| <= 2^53 (so JS sees
//   a number, as cbor-x would write it); otherwise an 8-byte integer head (JS sees a bigint).
// - BigInt: always the 8-byte head 1b/3b when it fits in 64 bits (cbor-x's bigint form, used for
//   protocol ids), otherwise tag 2/3 bignum.
// - Double: integral values in [-2^32, 2^32) as integers (as cbor-x does), else float64.
// - String/Bytes/Array/Object: major types 3/2/4/5; Undefined f7, Null f6, Bool f4/f5.

#include "protocol/limits.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <span>
#include <string>

namespace rivetkit::protocol {

Result<Value> cbor_decode(std::span<const std::uint8_t> data, const DecodeLimits& limits = {});
Result<Value> cbor_decode(std::string_view data, const DecodeLimits& limits = {});
std::string cbor_encode(const Value& v);
void cbor_encode_to(const Value& v, std::string& out);

}  // namespace rivetkit::protocol
