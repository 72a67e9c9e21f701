#pragma once
// EngineActorKv: an actor's ordered KV (storage/actor_kv.hpp) in the engine's per-actor KV store
// (envoy-protocol.md §4.8), over the one-method EngineKv link.
//
// The engine answers one request at a time within its limits (128 keys, 976 KiB of puts, a
// separate request per kind of write, lists of at most 16,384 entries). This keeps the seam's
// contract on top of them:
// - get: 128 keys per request; list: pages until the limit or the range ends, forward or reversed.
// - write: a batch that fits one request is that one request. A larger one (or puts with deletes)
//   goes through the commit journal (kv_commit_journal.hpp): written first as a redo record whose
//   chunk 0, written last and alone, is the commit point, then applied request by request, then
//   deleted. recover() (at load) re-applies a journal a crash left past its commit point and
//   deletes incomplete ones, so a batch is all or nothing wherever a crash cuts it.
// Writes are fenced by nothing here: the caller (KvActorStore) keeps its own record per
// generation; journals are per generation so that two generations never mix theirs.

#include "engine/engine_kv.hpp"
#include "storage/actor_kv.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace rivetkit::engine {

class EngineActorKv final : public storage::ActorKv {
 public:
  EngineActorKv(std::shared_ptr<EngineKv> link, std::string actor_id, std::uint32_t generation);

  Task<Result<std::vector<std::optional<std::string>>>> get(std::vector<std::string> keys) override;
  Task<Result<std::vector<storage::KvEntry>>> list(storage::KvQuery query) override;
  Task<Result<void>> write(storage::KvBatch batch) override;
  bool mixed_writes_cost_more() const override { return true; }
  /// The engine counts a key as its length + 2 against 2048 bytes.
  std::size_t max_key_size() const override { return 2046; }

  /// Finishes the journaled writes a crash cut short past their commit point and deletes the
  /// others (before anything reads the actor's keys).
  Task<Result<void>> recover() override;
  /// The batch as plain requests within the limits (range deletes, deletes, puts), no journal.
  Task<Result<void>> write_loose(storage::KvBatch batch) override;
  /// One request (a write); its engine refusal is a storage error.
  Task<Result<void>> send(envoy::KvRequestData request);

 private:
  std::shared_ptr<EngineKv> link_;
  std::string actor_id_;
  std::uint32_t generation_;
  /// Sequence number of this generation's last journal.
  std::uint64_t journal_seq_ = 0;
};

}  // namespace rivetkit::engine
