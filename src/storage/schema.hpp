#pragma once
// The local store's SQLite schema and its migration ladder.
//
// The schema version is `PRAGMA user_version`; `PRAGMA application_id` marks the file as a
// rivetkit local store. Each migration step runs in its own IMMEDIATE transaction together with
// the user_version bump, so a crash leaves the file at an old version, never half migrated. A
// stored version newer than this build is a hard error (no downgrade).
//
// Layout (version 4) — designed for ~1,000,000 actors in one file, most of them asleep:
//
//   meta(key TEXT PK, value ANY) STRICT, WITHOUT ROWID                                     [v1]
//       Free-form store metadata (`created_by_schema`, ...).
//   actors(rid INTEGER PK, actor_id TEXT, name TEXT, key TEXT NULL, input BLOB NULL,       [v1]
//          crash_policy TEXT, create_ts INTEGER, destroy_ts INTEGER NULL, generation INTEGER,
//          next_alarm INTEGER NULL [v4])
//       The actor directory, one row per actor ever created. `rid` is a compact internal id
//       (the rowid) that every per-actor table uses instead of the 30-byte actor id. Rows are
//       never deleted (destroyed actors stay as tombstones), so rids are never reused.
//       key NULL = keyless actor (never unique). `generation` is the highest generation that may
//       have been handed out (next_generation / acquire_generation, local_store.hpp).
//       `next_alarm` is the earliest trigger time of the actor's schedules (ms since the epoch;
//       NULL: none, or destroyed), written in the same transaction as the schedules' keys.
//     actors_by_id         UNIQUE (actor_id)                          -> get by id, wake
//     actors_live_key      UNIQUE (name, key) WHERE destroy_ts IS NULL -> find, duplicate check
//     actors_by_name_key   (name, key, create_ts)                     -> list by key incl.
//     destroyed actors_by_name       (name, create_ts)                          -> list incl.
//     destroyed actors_live_by_name  (name, create_ts) WHERE destroy_ts IS NULL  -> list live
//     actors_by_alarm      (next_alarm) WHERE next_alarm IS NOT NULL  -> pending_alarms, [v4]
//       an index walk over the actors that have schedules, never a scan
//       (rid is the implicit last column of every index, so `ORDER BY create_ts DESC, rid DESC`
//       is an index walk, never a sort.)
//
//   actor_kv(rid, key BLOB, value BLOB, PRIMARY KEY(rid, key)) STRICT, WITHOUT ROWID        [v3]
//       The actor's ordered KV (kv.hpp): the runtime's own records under 0x03 (state,
//       hibernating connections, schedules: runtime_records.hpp, since v4), user KV under 0x04,
//       later queues, workflows. Keys compare as BLOBs (memcmp, then length), the order kv.hpp
//       defines; the PK walks a prefix or range in either direction. WITHOUT ROWID: one
//       b-tree, rows are small (key <= 2 KiB, value <= 128 KiB; SQLite keeps large values on
//       overflow pages).
//
// Dropped in v4: actor_state, actor_conns, actor_schedules (v1-v2), the typed records; their
// rows are moved into actor_kv by the migration (records_migration.hpp).
//
// Later versions add per-actor data as keys of actor_kv, not as tables; destroy_actor wipes an
// actor's keys.

#include "storage/sqlite.hpp"
#include <rivetkit/result.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::storage {

/// The schema version this build writes.
inline constexpr std::int64_t kSchemaVersion = 4;
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

/// (actor_id, next_alarm) of every live actor with schedules, earliest first (an index walk of
/// actors_by_alarm).
inline constexpr const char* kPendingAlarmsSql =
    "SELECT actor_id, next_alarm FROM actors WHERE next_alarm IS NOT NULL AND destroy_ts IS NULL "
    "ORDER BY next_alarm, rid";

/// `actor_conns.subscriptions` of schema versions 2-3 (read by the v4 migration): a definite-length
/// CBOR array of text strings (the bytes of each name are kept as they are, even if not UTF-8). The
/// empty list is one byte, 0x80.
std::string encode_subscriptions(const std::vector<std::string>& names);
/// The inverse of encode_subscriptions; anything else -> `storage.corrupt_data`.
Result<std::vector<std::string>> decode_subscriptions(std::string_view bytes);

}  // namespace rivetkit::storage
