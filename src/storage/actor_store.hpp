#pragma once
// What the actor runtime needs to persist one actor. Local mode implements it over the local
// SQLite database (local_store.hpp); engine mode over the engine's per-actor storage.
//
// Contract: commit() calls from one actor are applied in the order they were made (the order of
// their co_await), and a commit resumes its caller only once the write is durable (fsynced
// locally, acknowledged by the engine remotely). Many concurrent commits may share one
// transaction/fsync (group commit).
//
// Under the typed records (state, connections, schedules) is the actor's ordered KV (kv.hpp);
// features on it (user KV, queues, workflows, SQLite pages) write through ActorWrite::kv and read
// through kv_store() (actor_kv.hpp).

#include "storage/actor_kv.hpp"
#include "storage/kv.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::storage {

/// A connection that survives the actor's sleep (core-semantics.md §2.5, §4 "What survives
/// sleep"): a `/connect` socket, or a raw WebSocket the actor allowed to hibernate.
struct PersistedConn {
  std::string conn_id;
  /// "connect" (actor-connect protocol) or "websocket" (raw).
  std::string kind = "connect";
  /// "json" | "cbor" | "bare" (connect sockets).
  std::string encoding = "bare";
  std::string params;  // CBOR of the connection params
  std::string state;   // CBOR of the connection state
  std::vector<std::string> subscriptions;
  std::string request_path;     // the path the socket was opened on, with its query
  std::string request_headers;  // CBOR map of the opening request's headers, names lower-cased
  /// The transport's id of a resumable socket (net::WsResumePoint::tunnel_id), opaque here: only
  /// the driver that made it reads it (engine mode, envoy-protocol.md §4.11). Empty locally.
  std::string tunnel_id;
  /// Where the socket's messages stand (WsResumePoint: next sent, last received).
  std::uint16_t server_message_index = 0;
  std::uint16_t client_message_index = 0;
};

/// A scheduled action (core-semantics.md §5, one-shot kind).
struct PersistedSchedule {
  std::string event_id;         // UUID v4
  std::int64_t trigger_at = 0;  // ms since the epoch
  std::string action;
  std::optional<std::string> args;  // CBOR of the argument array; nullopt for no arguments
  std::int64_t created_at = 0;      // ms since the epoch
  /// Failed runs so far (rivetkit-cpp retries failing schedules with backoff; RivetKit drops them).
  std::uint32_t attempts = 0;
};

/// The persisted part of an actor (core-semantics.md §2.2: `_rivet_actor` + `_rivet_actor_state`,
/// `_rivet_conns` + `_rivet_conn_state`, `_rivet_schedule_events`).
struct PersistedActor {
  bool has_initialized = false;
  std::optional<std::string> input;  // compat-CBOR bytes of the create input
  std::optional<std::string> state;  // CBOR bytes of the user state; nullopt before the first save
  std::vector<PersistedConn> conns;  // in conn_id order
  std::vector<PersistedSchedule> schedules;  // ordered by (trigger_at, event_id)
};

/// One atomic write: everything in it commits together or not at all. Fields left empty are not
/// touched. An upsert replaces the whole row with the same id; deleting an absent id is a no-op.
/// Upserts apply before deletes, so an id listed in both ends up deleted.
struct ActorWrite {
  std::optional<std::string> state;
  std::optional<bool> has_initialized;
  std::vector<PersistedConn> conn_upserts;
  std::vector<std::string> conn_deletes;
  std::vector<PersistedSchedule> schedule_upserts;
  std::vector<std::string> schedule_deletes;
  /// Writes to the actor's ordered KV (kv.hpp), applied in order, atomically with the rest.
  KvBatch kv;

  bool empty() const {
    return !state && !has_initialized && conn_upserts.empty() && conn_deletes.empty()
           && schedule_upserts.empty() && schedule_deletes.empty() && kv.empty();
  }
};

class ActorStore {
 public:
  virtual ~ActorStore() = default;
  virtual Task<Result<PersistedActor>> load() = 0;
  virtual Task<Result<void>> commit(ActorWrite write) = 0;
  /// The actor's ordered KV (actor_kv.hpp). Its reads see every commit that completed before
  /// they began; features write through ActorWrite::kv, atomically with the rest of a commit.
  virtual ActorKv& kv_store() = 0;
  /// The actor stopped cleanly after its last commit completed: nothing more will be written
  /// through this store. A store may record that (engine mode hands its keys to the next
  /// generation without copying them); commits after it may fail.
  virtual Task<void> close() { co_return; }
};

}  // namespace rivetkit::storage
