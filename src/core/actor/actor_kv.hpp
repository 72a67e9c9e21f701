#pragma once
// ActorKv: an actor's user KV (`c.kv()`, include/rivetkit/kv.hpp) as a part of the instance.
//
// Every call is checked and mapped first (core/user_kv.hpp: RivetKit's limits, the user key
// namespace), so a refused call writes nothing. Reads go to the store and see every write that
// completed before them. Writes go through the output gate: a batch joins the changes of the
// current turn (the state among them) and is committed with them as one write; the call resumes
// once that write is durable, and so does every reply that follows it. While the actor is still
// loading (create_state, on_create, create_vars, on_wake) nothing else commits, so a write goes
// to the store at once and a read right after sees it. Once the instance has ended, calls fail
// with kv.actor_stopped.
//
// Single strand. Errors are thrown as ActorError (what the typed API expects).

#include "storage/actor_store.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rivetkit::core {

class ActorKv final : public detail::KvApi {
 public:
  class Host {
   public:
    virtual ~Host() = default;
    /// Whether the instance's storage is still open to user calls.
    virtual bool kv_open() const = 0;
    /// Whether the start hooks are running (nothing else commits yet).
    virtual bool kv_loading() const = 0;
    /// Writes what changed now (take_changes included) and resumes once it is durable.
    virtual Task<Result<void>> save_now() = 0;
    /// Keeps the owner alive for the duration of a call.
    virtual std::shared_ptr<void> hold() = 0;
  };

  ActorKv(std::string actor_id, storage::ActorStore& store, Host& host);

  Task<std::vector<std::optional<std::string>>> get(std::vector<std::string> keys) override;
  Task<std::vector<std::pair<std::string, std::string>>> list(detail::KvList list) override;
  Task<void> write(std::vector<detail::KvWrite> writes) override;

  /// Moves the batches not yet written into `write` (in call order).
  void take_changes(storage::ActorWrite& write);

  // ---- the runtime's own keys (outside the user namespace; e.g. the inspector token) ----------
  /// The value of runtime key `key` (nullopt: absent).
  Task<Result<std::optional<std::string>>> runtime_get(std::string key);
  /// Writes runtime key `key` with the turn's changes; resumes once that write is durable.
  Task<Result<void>> runtime_put(std::string key, std::string value);

 private:
  void check_open() const;
  /// Commits `batch` (already mapped) with the turn's changes, or at once while loading.
  Task<Result<void>> commit_batch(storage::KvBatch batch);

  std::string actor_id_;  // for logs
  storage::ActorStore& store_;
  Host& host_;
  storage::KvBatch unsaved_;
};

}  // namespace rivetkit::core
