#pragma once
// The per-actor ordered key-value store: the storage primitive both modes provide (core-v2).
//
// Keys and values are byte strings, ordered by their bytes (memcmp, shorter first on a tie).
// Reads go straight to the store; writes are KvBatch operations carried by an ActorWrite, so
// they share the actor's commit (one atomic write with state, connections and schedules, and
// the group commit of local mode) and complete only once durable.
//
// Namespaces (the first key byte): the runtime keeps each feature under its own prefix so that
// none can reach another's keys. User KV (`c.kv()`) is kUserKvPrefix + the user's key, the
// prefix RivetKit gives user keys in actor KV (core-semantics.md §2.3).

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace rivetkit::storage {

/// First byte of every user KV key.
inline constexpr char kUserKvPrefix = '\x04';
/// The largest value a store takes (RivetKit's and the engine's limit: 128 KiB).
inline constexpr std::size_t kMaxKvValueSize = 128 * 1024;

struct KvEntry {
  std::string key;
  std::string value;
  bool operator==(const KvEntry&) const = default;
};

/// One write, applied in order with the others of its batch.
struct KvPut {
  std::string key;
  std::string value;
};
struct KvDelete {
  std::string key;
};
/// Deletes every key in [start, end); start >= end deletes nothing.
struct KvDeleteRange {
  std::string start;
  std::string end;
};
using KvOp = std::variant<KvPut, KvDelete, KvDeleteRange>;

/// What a list returns: keys in [start, end) (no end: every key from start on), or every key
/// starting with `prefix` when set (start/end ignored), in key order or reversed, at most
/// `limit` of them (none: all).
struct KvQuery {
  std::optional<std::string> prefix;
  std::string start;
  std::optional<std::string> end;
  bool reverse = false;
  std::optional<std::uint64_t> limit;
};

/// An ordered list of writes with the effect of applying them one after another.
class KvBatch {
 public:
  void put(std::string key, std::string value) {
    ops_.emplace_back(KvPut{std::move(key), std::move(value)});
  }
  void remove(std::string key) { ops_.emplace_back(KvDelete{std::move(key)}); }
  void remove_range(std::string start, std::string end) {
    ops_.emplace_back(KvDeleteRange{std::move(start), std::move(end)});
  }
  /// Appends `other`'s writes after these.
  void append(KvBatch other);
  bool empty() const { return ops_.empty(); }
  const std::vector<KvOp>& ops() const { return ops_; }

  /// The same effect as three sets applied in this order: ranges, then single deletes and puts
  /// (disjoint keys, so their order is free). A put or delete followed by a range covering it is
  /// dropped; a write after a range is kept. Stores that cannot apply an ordered list in one
  /// request (the engine has separate put, delete and delete-range requests) use this.
  struct Normalized {
    std::vector<std::pair<std::string, std::string>> ranges;
    std::vector<std::string> deletes;  // key order
    std::vector<KvEntry> puts;         // key order
  };
  Normalized normalized() const;

 private:
  std::vector<KvOp> ops_;
};

/// The key that sorts right after every key starting with `prefix` (the exclusive end of a
/// prefix range); nullopt when there is none (the prefix is empty or all 0xff bytes).
std::optional<std::string> prefix_end(std::string_view prefix);

/// Applies `batch` to an ordered map (an in-memory store: tests, and the engine store's view).
void apply_kv(std::map<std::string, std::string>& map, const KvBatch& batch);

/// The entries of `map` that `query` selects (same semantics as the stores).
std::vector<KvEntry> list_kv(const std::map<std::string, std::string>& map, const KvQuery& query);

}  // namespace rivetkit::storage
