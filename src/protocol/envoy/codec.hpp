#pragma once
// BARE codec for envoy protocol v8 (envoy-protocol.md §2.1, §3.1). The payload of one binary
// WebSocket message on the envoy socket is exactly one encoded ToRivet (runtime -> engine) or
// ToEnvoy (engine -> runtime), with no version prefix (§1.4).
//
// Encoders write union and enum tags as one byte, as the official codec does. Decoders reject:
// unknown union/enum tags, bools other than 0/1, optional markers other than 0/1, truncated
// input, trailing bytes after the top-level value, duplicate map keys, invalid UTF-8 in `str`, and
// list/map counts larger than the bytes that remain (nothing is allocated from an unchecked count).
// The schema is not recursive, so nesting depth is bounded by the schema itself (at most ~8
// levels). Non-canonical varints are accepted (the official codec rejects them). Nothing throws
// except std::bad_alloc.

#include "protocol/envoy/messages.hpp"
#include <rivetkit/error.hpp>
#include <rivetkit/result.hpp>

#include <string>
#include <string_view>

namespace rivetkit::protocol::envoy {

/// The error every envoy decoder reports: group "envoy", code "invalid_message", with a message
/// naming what was malformed and the byte offset.
Error envoy_decode_error(std::string message);

/// Runtime -> engine.
std::string encode(const ToRivet& message);
/// Engine -> runtime.
std::string encode(const ToEnvoy& message);

/// Appends the encoding to `out` (for callers that reuse a buffer).
void encode_to(const ToRivet& message, std::string& out);
void encode_to(const ToEnvoy& message, std::string& out);

/// Decodes one engine -> runtime payload. The whole input must be consumed.
Result<ToEnvoy> decode_to_envoy(std::string_view payload);
/// Decodes one runtime -> engine payload. The whole input must be consumed.
Result<ToRivet> decode_to_rivet(std::string_view payload);

/// The serverless `/start` body and other "embedded version" payloads (§2.2): u16 LE version
/// followed by the BARE payload. Only version 8 is accepted.
std::string encode_versioned(const ToEnvoy& message);
Result<ToEnvoy> decode_versioned_to_envoy(std::string_view body);

}  // namespace rivetkit::protocol::envoy
