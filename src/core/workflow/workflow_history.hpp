#pragma once
// WorkflowHistory: the durable record of one actor's workflow (core-semantics.md §8), in memory
// while the actor is awake and mirrored to its ordered KV under the 0x06 namespace.
//
// Model (RivetKit's): every workflow operation is an entry at a *location*, the path of names
// from the workflow's root (a step inside a loop iteration inside a join branch...). Names are
// interned once (a name registry) so locations stay small; a loop iteration is a marker segment
// (loop name, iteration) its operations sit under. Replaying the workflow after a restart walks
// the same locations and finds each operation's record.
//
// Keys (all under kPrefix, so nothing else can reach them):
//   0x06 0x01 <u32 BE index>  a registered name (its UTF-8 bytes)
//   0x06 0x02 <location>      an entry (its record, CBOR)
//   0x06 0x03                 the workflow's own record: state, output, error (CBOR)
// A location is a sequence of segments: 0x01 <u32 BE name> for a named entry, 0x02 <u32 BE loop
// name> <u32 BE iteration> for a loop iteration. A location's key is a prefix of the keys of
// everything under it, so a finished loop iteration is deleted with one range.
//
// Changes (a new or updated entry, a name, the workflow record, a deleted range) are kept until
// the actor's next write takes them (take_changes), with the state of the same turn.
//
// Single strand.

#include "storage/kv.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace rivetkit::core::workflow {

namespace keys {
inline constexpr char kPrefix = '\x06';
std::string name_key(std::uint32_t index);
std::string entry_key(std::string_view location);
std::string meta_key();
}  // namespace keys

namespace location {
/// `parent` followed by the named segment `name` (a name index).
std::string named(std::string_view parent, std::uint32_t name);
/// `parent` followed by iteration `iteration` of loop `loop` (a name index).
std::string iteration(std::string_view parent, std::uint32_t loop, std::uint32_t iteration);

/// One segment of a location, as the inspector shows it.
struct NameSegment {
  std::uint32_t name = 0;
};
struct IterationSegment {
  std::uint32_t loop = 0;
  std::uint32_t iteration = 0;
};
using Segment = std::variant<NameSegment, IterationSegment>;
/// The segments of `location`; nullopt when it is malformed.
std::optional<std::vector<Segment>> parse(std::string_view location);
}  // namespace location

enum class EntryKind : std::uint8_t {
  kStep,
  kLoop,
  kSleep,
  kMessage,
  kJoin,
  kRace,
  kRemoved,
  kVersionCheck,
  kRollbackCheckpoint,
};
std::string_view to_string(EntryKind kind);

enum class EntryStatus : std::uint8_t { kPending, kRunning, kCompleted, kFailed, kExhausted };
std::string_view to_string(EntryStatus status);

enum class SleepState : std::uint8_t { kPending, kCompleted, kInterrupted };
std::string_view to_string(SleepState state);

/// One recorded operation with its metadata.
struct Entry {
  std::string id;  // UUID v4: what the inspector names it by
  EntryKind kind = EntryKind::kStep;
  EntryStatus status = EntryStatus::kPending;
  std::optional<std::string> error;  // the last failure ("Name: message")
  std::uint32_t attempts = 0;
  std::int64_t last_attempt_at = 0;
  std::int64_t created_at = 0;
  std::optional<std::int64_t> completed_at;
  // kStep, kLoop: the result once there is one.
  std::optional<Value> output;
  // kLoop: the state the next iteration starts with, and its number.
  Value loop_state;
  std::uint32_t iteration = 0;
  // kSleep (and kMessage with a timeout: the wait's deadline).
  std::int64_t deadline = 0;
  SleepState sleep_state = SleepState::kPending;
  // kJoin, kRace: each branch's {status, output?, error?} by name; kRace: the winner.
  Value branches;
  std::optional<std::string> winner;
  // kRemoved: what the code used to run there (RivetKit's entry kind name, and its name).
  std::string original_kind;
  std::optional<std::string> original_name;
  // kVersionCheck: the version this run is pinned to there, and the latest the code knew.
  std::uint32_t resolved = 0;
  std::uint32_t latest = 0;
  // kRollbackCheckpoint: its name.
  std::string checkpoint;
  // kStep with a rollback handler, once the workflow failed and rolled back: when the handler
  // succeeded, or its last failure ("Name: message").
  std::optional<std::int64_t> rollback_completed_at;
  std::optional<std::string> rollback_error;
};

std::string encode_entry(const Entry& entry);
Result<Entry> decode_entry(std::string_view bytes);

/// How the workflow as a whole stands (RivetKit's WorkflowState).
enum class WorkflowState : std::uint8_t {
  kPending,
  kRunning,
  kSleeping,
  kCompleted,
  kFailed,
  kRollingBack,
  kCancelled
};
std::string_view to_string(WorkflowState state);

/// The workflow's own record.
struct WorkflowRecord {
  WorkflowState state = WorkflowState::kPending;
  std::optional<Value> output;
  /// The error it failed with: {name, message}.
  std::optional<Value> error;
};

std::string encode_record(const WorkflowRecord& record);
Result<WorkflowRecord> decode_record(std::string_view bytes);

class WorkflowHistory {
 public:
  /// Reads the stored history (every key under keys::kPrefix, in key order). Unreadable keys
  /// are an error: a workflow must not replay a history it cannot read.
  Result<void> load(const std::vector<storage::KvEntry>& stored);

  /// The index of `name`, registering it (a change) if it is new.
  std::uint32_t intern(const std::string& name);
  const std::vector<std::string>& names() const { return names_; }

  /// The entry at `location`, or nullptr.
  Entry* find(const std::string& location);
  const std::map<std::string, Entry>& entries() const { return entries_; }
  /// The entries (location, entry) in the order they were created (ties: by location).
  std::vector<std::pair<const std::string*, const Entry*>> in_creation_order() const;
  /// Adds (or replaces) the entry at `location`; a change.
  Entry& put(const std::string& location, Entry entry);
  /// The entry at `location` changed; the next write takes it.
  void touch(const std::string& location);
  /// Deletes every entry under `prefix` (a location; the entry at `prefix` itself too).
  void erase_under(const std::string& prefix);
  /// Deletes the entry at `location` only.
  void erase(const std::string& location);

  WorkflowRecord& record() { return record_; }
  const WorkflowRecord& record() const { return record_; }
  /// The workflow record changed.
  void touch_record() { record_dirty_ = true; }

  bool has_changes() const {
    return record_dirty_ || !dirty_.empty() || !erased_.empty() || !deleted_.empty()
           || saved_names_ < names_.size();
  }
  /// Moves the changes into `batch`: ranges deleted first, then names, entries and the record.
  void take_changes(storage::KvBatch& batch);

 private:
  std::vector<std::string> names_;
  std::map<std::string, std::uint32_t, std::less<>> name_index_;
  std::size_t saved_names_ = 0;
  std::map<std::string, Entry> entries_;
  std::set<std::string> dirty_;
  std::vector<std::string> erased_;   // location prefixes deleted since the last write
  std::vector<std::string> deleted_;  // single locations deleted since the last write
  WorkflowRecord record_;
  bool record_dirty_ = false;
};

}  // namespace rivetkit::core::workflow
