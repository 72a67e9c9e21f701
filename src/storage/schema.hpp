#pragma once
// The local store's SQLite schema and its migration ladder.
//
// The schema version is `PRAGMA user_version`; `PRAGMA application_id` marks the file as a
// rivetkit local store. Each migration step runs in its own IMMEDIATE transaction together with
// the user_version bump, so a crash leaves the file at an old version, never half migrated. A
// stored version newer than this build is a hard error (no downgrade).
//
// Layout (version 3) — designed for ~1,000,000 actors in one file, most of them with no
// connections and no schedules (per-actor tables hold rows only for actors that have some):
//
//   meta(key TEXT PK, value ANY) STRICT, WITHOUT ROWID                                     [v1]
//       Free-form store metadata (`created_by_schema`, ...).
//   actors(rid INTEGER PK, actor_id TEXT, name TEXT, key TEXT NULL, input BLOB NULL,       [v1]
//          crash_policy TEXT, create_ts INTEGER, destroy_ts INTEGER NULL, generation INTEGER)
//       The actor directory, one row per actor ever created. `rid` is a compact internal id
//       (the rowid) that every per-actor table uses instead of the 30-byte actor id. Rows are
//       never deleted (destroyed actors stay as tombstones), so rids are never reused.
//       key NULL = keyless actor (never unique). `generation` is the highest generation that may
//       have been handed out (next_generation / acquire_generation, local_store.hpp).
//     actors_by_id         UNIQUE (actor_id)                          -> get by id, wake
//     actors_live_key      UNIQUE (name, key) WHERE destroy_ts IS NULL -> find, duplicate check
//     actors_by_name_key   (name, key, create_ts)                     -> list by key incl.
//     destroyed actors_by_name       (name, create_ts)                          -> list incl.
//     destroyed actors_live_by_name  (name, create_ts) WHERE destroy_ts IS NULL  -> list live
//       (rid is the implicit last column of every index, so `ORDER BY create_ts DESC, rid DESC`
//       is an index walk, never a sort.)
//   actor_state(rid INTEGER PK, has_initialized INTEGER, state BLOB NULL) STRICT           [v1]
//       The hot per-actor row (core-semantics.md §2.2 `_rivet_actor` + `_rivet_actor_state`).
//       Absent until the first commit that sets state or has_initialized; deleted on destroy.
//   actor_conns(rid, conn_id TEXT, kind TEXT, encoding TEXT, params BLOB, state BLOB,      [v2]
//               subscriptions BLOB, request_path TEXT, request_headers BLOB, gateway_id BLOB,
//               request_id BLOB, server_message_index INTEGER, client_message_index INTEGER,
//               PRIMARY KEY(rid, conn_id)) STRICT
//       Hibernatable connections (core-semantics.md §2.5, `_rivet_conns` + `_rivet_conn_state`).
//       A rowid table, not WITHOUT ROWID: a row carries the opening request's headers (often
//       more than 1/20 of a page), and a WITHOUT ROWID b-tree copies whole rows into its interior
//       pages. The PK's index (rid, conn_id) gives the per-actor load in conn_id order.
//       `subscriptions` is a CBOR array of text strings (encode_subscriptions below).
//   actor_schedules(rid, event_id TEXT, trigger_at INTEGER, action TEXT, args BLOB NULL,   [v2]
//                   created_at INTEGER, attempts INTEGER, PRIMARY KEY(rid, event_id))
//                   STRICT, WITHOUT ROWID
//       One-shot scheduled actions (core-semantics.md §5, `_rivet_schedule_events`). Small rows.
//     actor_schedules_by_time (rid, trigger_at) (+ event_id, the PK's tail) -> per-actor load in
//       (trigger_at, event_id) order, per-actor MIN(trigger_at) for pending_alarms; both are
//       index walks, and pending_alarms reads only this (covering) index plus one actors row
//       per actor that has schedules.
//
//   actor_kv(rid, key BLOB, value BLOB, PRIMARY KEY(rid, key)) STRICT, WITHOUT ROWID        [v3]
//       The actor's ordered KV (kv.hpp): user KV under its 0x04 prefix. Keys compare as BLOBs
//       (memcmp, then length), the order kv.hpp defines; the PK walks a prefix or range in
//       either direction. WITHOUT ROWID: one b-tree, rows are small (key <= 2 KiB, value
//       <= 128 KiB; SQLite keeps large values on overflow pages). A database at version 2
//       gains the empty table on first open.
//
// Later versions add more per-actor tables keyed by rid (queues) as new ladder steps;
// destroy_actor must then wipe them too.

#include "storage/sqlite.hpp"
#include <rivetkit/result.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::storage {

/// The schema version this build writes.
inline constexpr std::int64_t kSchemaVersion = 3;
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

/// An actor's connections, in conn_id order (columns in PersistedConn order). ?1 rid.
inline constexpr const char* kLoadConnsSql =
    "SELECT conn_id, kind, encoding, params, state, subscriptions, request_path, "
    "request_headers, gateway_id, request_id, server_message_index, client_message_index "
    "FROM actor_conns WHERE rid = ?1 ORDER BY conn_id";

/// An actor's schedules, ordered by (trigger_at, event_id). ?1 rid.
inline constexpr const char* kLoadSchedulesSql =
    "SELECT event_id, trigger_at, action, args, created_at, attempts "
    "FROM actor_schedules WHERE rid = ?1 ORDER BY trigger_at, event_id";

/// (actor_id, MIN(trigger_at)) of every live actor with schedules, earliest first.
inline constexpr const char* kPendingAlarmsSql =
    "SELECT a.actor_id, m.trigger_at FROM "
    "(SELECT rid, min(trigger_at) AS trigger_at FROM actor_schedules GROUP BY rid) AS m "
    "JOIN actors AS a ON a.rid = m.rid WHERE a.destroy_ts IS NULL "
    "ORDER BY m.trigger_at, m.rid";

/// `actor_conns.subscriptions`: a definite-length CBOR array of text strings (the bytes of each
/// name are kept as they are, even if not UTF-8). The empty list is one byte, 0x80.
std::string encode_subscriptions(const std::vector<std::string>& names);
/// The inverse of encode_subscriptions; anything else -> `storage.corrupt_data`.
Result<std::vector<std::string>> decode_subscriptions(std::string_view bytes);

}  // namespace rivetkit::storage
