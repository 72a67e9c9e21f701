#pragma once
// Local mode's actor directory (core/directory.hpp) over the SQLite store, with an in-memory
// cache for the gateway's hot path (local/directory_cache.hpp): routing a request to a known actor
// costs no storage round trip.

#include "core/directory.hpp"
#include "core/runtime.hpp"
#include "local/directory_cache.hpp"
#include "storage/local_store.hpp"

#include <functional>
#include <memory>
#include <string>

namespace rivetkit::local {

class LocalDirectory final : public core::ActorDirectory {
 public:
  /// `destroyed` runs once an actor's data is gone (the mode clears its alarm).
  LocalDirectory(std::shared_ptr<storage::LocalStore> store,
                 core::Runtime& runtime,
                 std::function<void(const std::string& actor_id)> destroyed = {});

  Task<Result<std::optional<core::ActorRecord>>> get_for_id(std::string actor_id) override;
  Task<Result<std::optional<core::ActorRecord>>> get_with_key(std::string name,
                                                              std::string key) override;
  Task<Result<GetOrCreated>> get_or_create(core::ActorRecord wanted) override;
  Task<Result<core::ActorRecord>> create(core::ActorRecord wanted) override;
  Task<Result<bool>> destroy(std::string actor_id) override;
  Task<Result<std::vector<core::ActorRecord>>> list(core::ActorListQuery query) override;

  /// Drops the cached record (the actor went to sleep, or its record may be stale).
  void forget_cached(const std::string& actor_id) { cache_.erase(actor_id); }

 private:
  std::shared_ptr<storage::LocalStore> store_;
  core::Runtime& runtime_;
  std::function<void(const std::string&)> destroyed_;
  DirectoryCache cache_;
};

}  // namespace rivetkit::local
