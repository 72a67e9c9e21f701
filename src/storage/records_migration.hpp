#pragma once
// Schema version 4 of the local store (schema.hpp): the runtime's records of every actor move
// from the typed tables of versions 1-3 (actor_state, actor_conns, actor_schedules) into keys of
// the actor's ordered KV (actor_kv), in the layout engine mode uses (runtime_records.hpp, epoch 0:
// local mode does not fence generations), and each actor's earliest schedule into
// actors.next_alarm. The typed tables are then dropped.
//
// Runs inside the migration step's transaction (schema.cpp): a crash leaves the file at
// version 3 with every row in place. A row that does not decode fails the migration with
// `storage.corrupt_data` and changes nothing.

#include "storage/sqlite.hpp"
#include <rivetkit/result.hpp>

namespace rivetkit::storage {

Result<void> move_records_into_keys(sqlite::Database& db);

}  // namespace rivetkit::storage
