#pragma once
// The byte form of a storage::PersistedActor as engine mode keeps it in the engine's KV store:
// a version byte, then BARE-encoded fields (our own format; nothing outside rivetkit-cpp reads
// it). Decoding rejects anything malformed instead of guessing.

#include "storage/actor_store.hpp"
#include <rivetkit/result.hpp>

#include <string>
#include <string_view>

namespace rivetkit::engine {

std::string encode_record(const storage::PersistedActor& actor);
Result<storage::PersistedActor> decode_record(std::string_view bytes);

/// Applies one write to an in-memory record with ActorWrite's rules (upserts before deletes).
void apply_write(storage::PersistedActor& actor, const storage::ActorWrite& write);

}  // namespace rivetkit::engine
