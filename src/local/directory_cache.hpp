#pragma once
// In-memory cache of the actor directory for the gateway hot path: (name, key) -> record and
// id -> record for live actors, so routing a request to a known actor costs no storage round trip
// (a getOrCreate handle sends its query on every call, client-protocol.md §5.2). The store stays
// the source of truth: entries are added after the store answered, removed on destroy and when
// the actor goes to sleep (a sleeping actor costs no memory), and the cache is simply cleared
// when it grows past its bound. A destroyed actor's id is remembered so that no lookup racing
// with the destroy can cache it again.

#include "storage/local_store.hpp"

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace rivetkit::local {

class DirectoryCache {
 public:
  explicit DirectoryCache(std::size_t max_entries = 200'000) : max_entries_(max_entries) {}

  std::optional<storage::ActorRecord> by_id(const std::string& actor_id) const;
  std::optional<storage::ActorRecord> by_key(const std::string& name, const std::string& key) const;
  /// Remembers a live actor (destroyed records are ignored).
  void put(const storage::ActorRecord& record);
  void erase(const std::string& actor_id);
  /// Erases an actor that is being destroyed, for good: a lookup that read its record before the
  /// destroy reached the store (while its instance was stopping) must not put it back, or its key
  /// would name the dead actor until the cache is cleared.
  void erase_destroyed(const std::string& actor_id);

 private:
  static std::string key_of(const std::string& name, const std::string& key) {
    return name + '\0' + key;
  }
  /// Rehashes to fit when fewer than 1/8 of the buckets are used (amortized O(1) per erase).
  template <class Map>
  static void shrink_if_sparse(Map& map) {
    if (map.bucket_count() > 64 && map.size() * 8 < map.bucket_count()) {
      map.rehash(0);
    }
  }
  mutable std::mutex mutex_;
  std::size_t max_entries_;
  std::unordered_map<std::string, storage::ActorRecord> by_id_;
  std::unordered_map<std::string, std::string> by_key_;
  // Actors being or already destroyed (cleared with the rest when the cache is full).
  std::unordered_set<std::string> destroyed_;
};

}  // namespace rivetkit::local
