#pragma once
// UserStorage: the storage an actor's own code uses, `c.kv()` (actor_kv.hpp), `c.db()`
// (actor_database.hpp), `c.queue()` (actor_queue.hpp) and the workflow's history
// (core/workflow/actor_workflow.hpp). Each keeps what it changes until the
// actor's next write takes it, so they commit together with the state, connections and schedules
// of the same turn.

#include "core/actor/actor_database.hpp"
#include "core/actor/actor_kv.hpp"
#include "core/actor/actor_queue.hpp"
#include "core/workflow/actor_workflow.hpp"
#include "storage/actor_store.hpp"

namespace rivetkit::core {

struct UserStorage {
  ActorKv kv;
  ActorDatabase db;
  ActorQueue queue;
  ActorWorkflow workflow;

  /// Moves what they changed into `write` (KV batches first, then the queue's messages, the
  /// workflow's history, then the database's pages).
  void take_changes(storage::ActorWrite& write) {
    kv.take_changes(write);
    queue.take_changes(write);
    workflow.take_changes(write);
    db.take_changes(write);
  }
  /// The write that took the last changes is durable.
  void write_durable() { db.write_durable(); }
};

}  // namespace rivetkit::core
