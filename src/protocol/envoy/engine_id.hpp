#pragma once
// The engine's identifiers (envoy-protocol.md §4.9): an actor id is 30 lowercase base36 digits,
// least significant first, encoding 19 bytes whose first (least significant) byte is the
// version, 1. The engine refuses any other string in its requests, and a KV request naming one
// costs the envoy its connection; so an id that comes from outside the engine (a serverless
// /start body) is checked before anything is sent about it.

#include <string_view>

namespace rivetkit::protocol::envoy {

/// Whether `id` is an actor (or namespace) id the engine accepts: 30 characters of [0-9a-z] that
/// decode to 19 bytes of version 1.
bool is_engine_id(std::string_view id);

}  // namespace rivetkit::protocol::envoy
