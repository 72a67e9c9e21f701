#pragma once
// The inspector's per-actor token (core-semantics.md §9): how it is made, where it is kept and how
// a request presents it.
//
// - Made once per actor: 32 random bytes, base64url without padding.
// - Kept in the actor's ordered KV (storage/kv.hpp) under kTokenKey, the key RivetKit mirrors it
//   under; in engine mode that is the engine's actor KV, where Rivet's dashboard reads it
//   (`GET /actors/{id}/kv/keys/Aw`), and local mode answers the same route.
// - Presented as `Authorization: Bearer <token>` (the scheme in any case) or, on the inspector
//   WebSocket, as the subprotocol `rivet_inspector_token.<token>`; compared in constant time.

#include <optional>
#include <string>
#include <string_view>

namespace rivetkit::core::inspector {

/// The KV key of the token: the single byte 0x03 (RivetKit's KV [3]).
std::string token_key();
/// A new token: 32 bytes from the system's random source, base64url without padding.
std::string generate_token();
/// Whether `presented` is `expected`; the time taken depends only on their lengths.
bool token_matches(std::string_view presented, std::string_view expected);
/// The token of an Authorization header `Bearer <token>` (scheme case-insensitive, spaces after
/// it skipped); nullopt when the header is not of that form or the token is empty.
std::optional<std::string> bearer_token(std::string_view authorization);
/// The token of a `Sec-WebSocket-Protocol` list offering `rivet_inspector_token.<token>`.
std::optional<std::string> subprotocol_token(std::string_view protocols);

}  // namespace rivetkit::core::inspector
