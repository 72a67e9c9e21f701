#pragma once
// The local store's SQLite schema and its migration ladder.
//
// The schema version is `PRAGMA user_version`; `PRAGMA application_id` marks the file as a
// rivetkit local store. Each migration step runs in its own IMMEDIATE transaction together with
// the user_version bump, so a crash leaves the file at an old version, never half migrated. A
// stored version newer than this build is a hard error (no downgrade).
//
// Layout (version 1) — designed for ~1,000,000 actors in one file:
//
//   meta(key TEXT PK, value ANY) STRICT, WITHOUT ROWID
//       Free-form store metadata (`created_by_schema`, ...).
//   actors(rid INTEGER PK, actor_id TEXT, name TEXT, key TEXT NULL, input BLOB NULL,
//          crash_policy TEXT, create_ts INTEGER, destroy_ts INTEGER NULL, generation INTEGER)
//       The actor directory, one row per actor ever created. `rid` is a compact internal id
//       (the rowid) that every per-actor table uses instead of the 30-byte actor id. Rows are
//       never deleted (destroyed actors stay as tombstones), so rids are never reused.
//       key NULL = keyless actor (never unique).
//     actors_by_id         UNIQUE (actor_id)                          -> get by id, wake
//     actors_live_key      UNIQUE (name, key) WHERE destroy_ts IS NULL -> find, duplicate check
//     actors_by_name_key   (name, key, create_ts)                     -> list by key incl.
//     destroyed actors_by_name       (name, create_ts)                          -> list incl.
//     destroyed actors_live_by_name  (name, create_ts) WHERE destroy_ts IS NULL  -> list live
//       (rid is the implicit last column of every index, so `ORDER BY create_ts DESC, rid DESC`
//       is an index walk, never a sort.)
//   actor_state(rid INTEGER PK, has_initialized INTEGER, state BLOB NULL) STRICT
//       The hot per-actor row (core-semantics.md §2.2 `_rivet_actor` + `_rivet_actor_state`).
//       Absent until the first commit; deleted on destroy.
//
// Later versions add per-actor tables keyed by rid (connections, schedules, KV `(rid, key) PK
// WITHOUT ROWID`, queues) as new ladder steps; destroy_actor must then wipe them too.

#include "storage/sqlite.hpp"
#include <rivetkit/result.hpp>

#include <cstdint>
#include <string>

namespace rivetkit::storage {

/// The schema version this build writes.
inline constexpr std::int64_t kSchemaVersion = 1;
/// `PRAGMA application_id` of a local store ("RVKT").
inline constexpr std::int64_t kApplicationId = 0x52564B54;

/// Brings `db` up to kSchemaVersion. Fails on a foreign file or a newer version.
Result<void> migrate(sqlite::Database& db);

/// Runs the steps up to and including `target` only (tests of the ladder itself).
Result<void> migrate_to(sqlite::Database& db, std::int64_t target);

/// The directory columns every actor query returns, in ActorRecord order.
inline constexpr const char* kActorColumns =
    "actor_id, name, key, input, crash_policy, create_ts, destroy_ts, generation";

/// The list query for one shape. Parameters: ?1 name, ?2 before_create_ts (exclusive), ?3 limit,
/// ?4 key (only when `by_key`). `destroy_ts IS NULL` is spelled out (not a bound flag) so the
/// planner can use the partial indexes; tests check the plans walk an index without sorting.
std::string list_actors_sql(bool by_key, bool include_destroyed);

}  // namespace rivetkit::storage
