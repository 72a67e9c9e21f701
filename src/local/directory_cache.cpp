#include "local/directory_cache.hpp"

namespace rivetkit::local {

std::optional<storage::ActorRecord> DirectoryCache::by_id(const std::string& actor_id) const {
  std::lock_guard lock(mutex_);
  auto it = by_id_.find(actor_id);
  if (it == by_id_.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::optional<storage::ActorRecord> DirectoryCache::by_key(const std::string& name,
                                                           const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = by_key_.find(key_of(name, key));
  if (it == by_key_.end()) {
    return std::nullopt;
  }
  auto rec = by_id_.find(it->second);
  if (rec == by_id_.end()) {
    return std::nullopt;
  }
  return rec->second;
}

void DirectoryCache::put(const storage::ActorRecord& record) {
  if (record.destroy_ts) {
    return;
  }
  std::lock_guard lock(mutex_);
  if (destroyed_.count(record.actor_id) != 0) {
    return;
  }
  if (by_id_.size() >= max_entries_ || destroyed_.size() >= max_entries_) {
    by_id_.clear();
    by_key_.clear();
    destroyed_.clear();
  }
  by_id_[record.actor_id] = record;
  if (!record.key.empty()) {  // keyless actors are never found by key
    by_key_[key_of(record.name, record.key)] = record.actor_id;
  }
}

void DirectoryCache::erase_destroyed(const std::string& actor_id) {
  erase(actor_id);
  std::lock_guard lock(mutex_);
  destroyed_.insert(actor_id);
}

void DirectoryCache::erase(const std::string& actor_id) {
  std::lock_guard lock(mutex_);
  auto it = by_id_.find(actor_id);
  if (it == by_id_.end()) {
    return;
  }
  auto k = by_key_.find(key_of(it->second.name, it->second.key));
  if (k != by_key_.end() && k->second == actor_id) {
    by_key_.erase(k);
  }
  by_id_.erase(it);
  // Sleeping actors leave the cache: once most entries are gone, give the bucket arrays (8 bytes
  // per bucket, sized for the high-water mark) back too.
  shrink_if_sparse(by_id_);
  shrink_if_sparse(by_key_);
}

}  // namespace rivetkit::local
