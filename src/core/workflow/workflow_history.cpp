#include "core/workflow/workflow_history.hpp"

#include "core/actor/stored_value.hpp"

#include <algorithm>
#include <array>

namespace rivetkit::core::workflow {

namespace {

constexpr char kNameTag = '\x01';
constexpr char kEntryTag = '\x02';
constexpr char kRecordTag = '\x03';
constexpr char kNamedSegment = '\x01';
constexpr char kIterationSegment = '\x02';
// Record format version, kept in every record so a later format can read older ones.
constexpr std::int64_t kFormat = 1;

void put_be32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

std::uint32_t get_be32(std::string_view in, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    v = (v << 8) | static_cast<std::uint8_t>(in[at + i]);
  }
  return v;
}

tl::unexpected<Error> corrupt(std::string what) {
  return fail(Error{"workflow", "history_corrupt",
                    "Workflow history is unreadable: " + std::move(what), std::nullopt, false});
}

/// A record written by a newer runtime (a format this one does not know) is refused: replaying
/// a history this runtime reads wrongly would diverge or repeat steps.
Result<void> check_format(const Value& record) {
  const auto* v = record.find("v");
  if (v != nullptr && v->is_int() && v->as_int() > kFormat) {
    return fail(Error{
        "workflow", "history_version",
        "Workflow history was written in format " + std::to_string(v->as_int())
            + ", newer than this runtime reads (" + std::to_string(kFormat)
            + "): run it with the runtime version that wrote it",
        Value::object({{"format", Value(v->as_int())}, {"supported", Value(kFormat)}}), false});
  }
  return {};
}

template <class E, std::size_t N>
std::optional<E> from_name(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) {
      return static_cast<E>(i);
    }
  }
  return std::nullopt;
}

constexpr std::array<std::string_view, 9> kKindNames{
    "step",    "loop",          "sleep",
    "message", "join",          "race",
    "removed", "version_check", "rollback_checkpoint"};
constexpr std::array<std::string_view, 5> kStatusNames{"pending", "running", "completed", "failed",
                                                       "exhausted"};
constexpr std::array<std::string_view, 3> kSleepNames{"pending", "completed", "interrupted"};
constexpr std::array<std::string_view, 7> kStateNames{
    "pending", "running", "sleeping", "completed", "failed", "rolling_back", "cancelled"};

// Integers may come back as any number kind (the stored encoding is RivetKit's compat CBOR).
std::optional<std::int64_t> int_of(const Value* v) {
  if (v == nullptr) {
    return std::nullopt;
  }
  if (v->is_int()) {
    return v->as_int();
  }
  if (v->is_double()) {
    return static_cast<std::int64_t>(v->as_double());
  }
  if (v->is_bigint()) {
    return v->as_bigint().to_int64();
  }
  return std::nullopt;
}

std::optional<std::string> string_of(const Value* v) {
  if (v == nullptr || !v->is_string()) {
    return std::nullopt;
  }
  return v->as_string();
}

}  // namespace

std::string_view to_string(EntryKind kind) {
  return kKindNames.at(static_cast<std::size_t>(kind));
}
std::string_view to_string(EntryStatus status) {
  return kStatusNames.at(static_cast<std::size_t>(status));
}
std::string_view to_string(SleepState state) {
  return kSleepNames.at(static_cast<std::size_t>(state));
}
std::string_view to_string(WorkflowState state) {
  return kStateNames.at(static_cast<std::size_t>(state));
}

// ---- keys and locations -------------------------------------------------------------------------

namespace keys {
std::string name_key(std::uint32_t index) {
  std::string k{kPrefix, kNameTag};
  put_be32(k, index);
  return k;
}
std::string entry_key(std::string_view location) {
  std::string k{kPrefix, kEntryTag};
  k.append(location);
  return k;
}
std::string meta_key() {
  return std::string{kPrefix, kRecordTag};
}
}  // namespace keys

namespace location {
std::string named(std::string_view parent, std::uint32_t name) {
  std::string out(parent);
  out.push_back(kNamedSegment);
  put_be32(out, name);
  return out;
}

std::string iteration(std::string_view parent, std::uint32_t loop, std::uint32_t iteration) {
  std::string out(parent);
  out.push_back(kIterationSegment);
  put_be32(out, loop);
  put_be32(out, iteration);
  return out;
}

std::optional<std::vector<Segment>> parse(std::string_view loc) {
  std::vector<Segment> out;
  std::size_t at = 0;
  while (at < loc.size()) {
    if (loc[at] == kNamedSegment && at + 5 <= loc.size()) {
      out.emplace_back(NameSegment{get_be32(loc, at + 1)});
      at += 5;
    } else if (loc[at] == kIterationSegment && at + 9 <= loc.size()) {
      out.emplace_back(IterationSegment{get_be32(loc, at + 1), get_be32(loc, at + 5)});
      at += 9;
    } else {
      return std::nullopt;
    }
  }
  return out;
}
}  // namespace location

// ---- records ------------------------------------------------------------------------------------

std::string encode_entry(const Entry& e) {
  Value v = Value::object({{"v", Value(kFormat)},
                           {"id", Value(e.id)},
                           {"kind", Value(std::string(to_string(e.kind)))},
                           {"status", Value(std::string(to_string(e.status)))},
                           {"attempts", Value(e.attempts)},
                           {"lastAttemptAt", Value(e.last_attempt_at)},
                           {"createdAt", Value(e.created_at)}});
  if (e.error) {
    v.set("error", Value(*e.error));
  }
  if (e.completed_at) {
    v.set("completedAt", Value(*e.completed_at));
  }
  if (e.output) {
    // Wrapped, so an undefined result (a step returning nothing) stays distinct from none.
    v.set("output", Value::array({*e.output}));
  }
  if (e.kind == EntryKind::kLoop) {
    v.set("state", e.loop_state);
    v.set("iteration", Value(e.iteration));
  }
  if (e.kind == EntryKind::kSleep || e.kind == EntryKind::kMessage) {
    v.set("deadline", Value(e.deadline));
    v.set("sleepState", Value(std::string(to_string(e.sleep_state))));
  }
  if (e.kind == EntryKind::kJoin || e.kind == EntryKind::kRace) {
    v.set("branches", e.branches);
    if (e.winner) {
      v.set("winner", Value(*e.winner));
    }
  }
  if (e.kind == EntryKind::kRemoved) {
    v.set("originalType", Value(e.original_kind));
    if (e.original_name) {
      v.set("originalName", Value(*e.original_name));
    }
  }
  if (e.kind == EntryKind::kVersionCheck) {
    v.set("resolved", Value(e.resolved));
    v.set("latest", Value(e.latest));
  }
  if (e.kind == EntryKind::kRollbackCheckpoint) {
    v.set("name", Value(e.checkpoint));
  }
  if (e.rollback_completed_at) {
    v.set("rollbackCompletedAt", Value(*e.rollback_completed_at));
  }
  if (e.rollback_error) {
    v.set("rollbackError", Value(*e.rollback_error));
  }
  return encode_stored(v);
}

Result<Entry> decode_entry(std::string_view bytes) {
  auto decoded = decode_stored(std::string(bytes));
  if (!decoded || !decoded->is_object()) {
    return corrupt("an entry is not a record");
  }
  if (auto format = check_format(*decoded); !format) {
    return fail(format.error());
  }
  const Value& v = *decoded;
  Entry e;
  auto id = string_of(v.find("id"));
  auto kind = string_of(v.find("kind"));
  auto status = string_of(v.find("status"));
  if (!id || !kind || !status) {
    return corrupt("an entry lacks its id, kind or status");
  }
  auto k = from_name<EntryKind>(kKindNames, *kind);
  auto s = from_name<EntryStatus>(kStatusNames, *status);
  if (!k || !s) {
    return corrupt("unknown entry kind or status: " + *kind + "/" + *status);
  }
  e.id = std::move(*id);
  e.kind = *k;
  e.status = *s;
  e.error = string_of(v.find("error"));
  e.attempts =
      static_cast<std::uint32_t>(std::max<std::int64_t>(0, int_of(v.find("attempts")).value_or(0)));
  e.last_attempt_at = int_of(v.find("lastAttemptAt")).value_or(0);
  e.created_at = int_of(v.find("createdAt")).value_or(0);
  e.completed_at = int_of(v.find("completedAt"));
  if (const auto* out = v.find("output");
      out != nullptr && out->is_array() && out->as_array().size() == 1) {
    e.output = out->as_array().front();
  }
  if (e.kind == EntryKind::kLoop) {
    if (const auto* st = v.find("state")) {
      e.loop_state = *st;
    }
    e.iteration = static_cast<std::uint32_t>(
        std::max<std::int64_t>(0, int_of(v.find("iteration")).value_or(0)));
  }
  if (e.kind == EntryKind::kJoin || e.kind == EntryKind::kRace) {
    if (const auto* b = v.find("branches")) {
      e.branches = *b;
    }
    e.winner = string_of(v.find("winner"));
  }
  if (e.kind == EntryKind::kRemoved) {
    e.original_kind = string_of(v.find("originalType")).value_or(std::string());
    e.original_name = string_of(v.find("originalName"));
  }
  if (e.kind == EntryKind::kVersionCheck) {
    auto u32 = [&](const char* key) {
      return static_cast<std::uint32_t>(
          std::clamp<std::int64_t>(int_of(v.find(key)).value_or(0), 0, UINT32_MAX));
    };
    e.resolved = u32("resolved");
    e.latest = u32("latest");
  }
  if (e.kind == EntryKind::kRollbackCheckpoint) {
    e.checkpoint = string_of(v.find("name")).value_or(std::string());
  }
  e.rollback_completed_at = int_of(v.find("rollbackCompletedAt"));
  e.rollback_error = string_of(v.find("rollbackError"));
  if (e.kind == EntryKind::kSleep || e.kind == EntryKind::kMessage) {
    e.deadline = int_of(v.find("deadline")).value_or(0);
    auto ss = string_of(v.find("sleepState"));
    e.sleep_state = ss ? from_name<SleepState>(kSleepNames, *ss).value_or(SleepState::kPending)
                       : SleepState::kPending;
  }
  return e;
}

std::string encode_record(const WorkflowRecord& r) {
  Value v =
      Value::object({{"v", Value(kFormat)}, {"state", Value(std::string(to_string(r.state)))}});
  if (r.output) {
    v.set("output", Value::array({*r.output}));
  }
  if (r.error) {
    v.set("error", *r.error);
  }
  return encode_stored(v);
}

Result<WorkflowRecord> decode_record(std::string_view bytes) {
  auto decoded = decode_stored(std::string(bytes));
  if (!decoded || !decoded->is_object()) {
    return corrupt("the workflow record is not a record");
  }
  if (auto format = check_format(*decoded); !format) {
    return fail(format.error());
  }
  WorkflowRecord r;
  auto state = string_of(decoded->find("state"));
  auto parsed = state ? from_name<WorkflowState>(kStateNames, *state) : std::nullopt;
  if (!parsed) {
    return corrupt("the workflow record has no known state");
  }
  r.state = *parsed;
  if (const auto* out = decoded->find("output");
      out != nullptr && out->is_array() && out->as_array().size() == 1) {
    r.output = out->as_array().front();
  }
  if (const auto* err = decoded->find("error")) {
    r.error = *err;
  }
  return r;
}

// ---- the history --------------------------------------------------------------------------------

Result<void> WorkflowHistory::load(const std::vector<storage::KvEntry>& stored) {
  std::map<std::uint32_t, std::string> names;
  for (const auto& kv : stored) {
    if (kv.key.size() < 2 || kv.key[0] != keys::kPrefix) {
      continue;
    }
    const std::string_view rest = std::string_view(kv.key).substr(2);
    switch (kv.key[1]) {
      case kNameTag:
        if (rest.size() != 4) {
          return corrupt("a name key has the wrong size");
        }
        names[get_be32(rest, 0)] = kv.value;
        break;
      case kEntryTag: {
        if (!location::parse(rest)) {
          return corrupt("an entry key is not a location");
        }
        auto entry = decode_entry(kv.value);
        if (!entry) {
          return fail(entry.error());
        }
        entries_.emplace(std::string(rest), std::move(*entry));
        break;
      }
      case kRecordTag: {
        auto record = decode_record(kv.value);
        if (!record) {
          return fail(record.error());
        }
        record_ = std::move(*record);
        break;
      }
      default:
        return corrupt("unknown key tag");
    }
  }
  // Names are registered in order, 0 up; a gap means a lost key.
  for (auto& [index, name] : names) {
    if (index != names_.size()) {
      return corrupt("the name registry has a gap at " + std::to_string(names_.size()));
    }
    name_index_.emplace(name, index);
    names_.push_back(std::move(name));
  }
  saved_names_ = names_.size();
  return Result<void>{};
}

std::uint32_t WorkflowHistory::intern(const std::string& name) {
  if (auto it = name_index_.find(name); it != name_index_.end()) {
    return it->second;
  }
  const auto index = static_cast<std::uint32_t>(names_.size());
  names_.push_back(name);
  name_index_.emplace(name, index);
  return index;
}

std::vector<std::pair<const std::string*, const Entry*>> WorkflowHistory::in_creation_order()
    const {
  std::vector<std::pair<const std::string*, const Entry*>> ordered;
  for (const auto& [loc, e] : entries_) {
    ordered.emplace_back(&loc, &e);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return a.second->created_at < b.second->created_at;
  });
  return ordered;
}

Entry* WorkflowHistory::find(const std::string& location) {
  auto it = entries_.find(location);
  return it == entries_.end() ? nullptr : &it->second;
}

Entry& WorkflowHistory::put(const std::string& location, Entry entry) {
  dirty_.insert(location);
  return entries_.insert_or_assign(location, std::move(entry)).first->second;
}

void WorkflowHistory::touch(const std::string& location) {
  dirty_.insert(location);
}

void WorkflowHistory::erase_under(const std::string& prefix) {
  auto it = entries_.lower_bound(prefix);
  while (it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0) {
    dirty_.erase(it->first);
    it = entries_.erase(it);
  }
  // Dirty entries under it that were never stored go too (erased above); stored ones go with
  // the range.
  erased_.push_back(prefix);
}

void WorkflowHistory::erase(const std::string& location) {
  entries_.erase(location);
  dirty_.erase(location);
  deleted_.push_back(location);
}

void WorkflowHistory::take_changes(storage::KvBatch& batch) {
  for (const auto& prefix : erased_) {
    const auto start = keys::entry_key(prefix);
    if (auto end = storage::prefix_end(start)) {
      batch.remove_range(start, *end);
    }
  }
  erased_.clear();
  for (const auto& loc : deleted_) {
    batch.remove(keys::entry_key(loc));
  }
  deleted_.clear();
  for (; saved_names_ < names_.size(); ++saved_names_) {
    batch.put(keys::name_key(static_cast<std::uint32_t>(saved_names_)), names_[saved_names_]);
  }
  for (const auto& loc : dirty_) {
    if (const auto* e = find(loc)) {
      batch.put(keys::entry_key(loc), encode_entry(*e));
    }
  }
  dirty_.clear();
  if (record_dirty_) {
    batch.put(keys::meta_key(), encode_record(record_));
    record_dirty_ = false;
  }
}

}  // namespace rivetkit::core::workflow
