#include "core/workflow/workflow_view.hpp"

#include "core/actor/stored_value.hpp"
#include "protocol/bare/bare.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace rivetkit::core::workflow {

namespace {

Value location_json(const std::string& loc) {
  Array out;
  for (const auto& segment : location::parse(loc).value_or(std::vector<location::Segment>{})) {
    if (const auto* named = std::get_if<location::NameSegment>(&segment)) {
      out.emplace_back(named->name);
    } else {
      const auto& it = std::get<location::IterationSegment>(segment);
      out.push_back(Value::object({{"loop", Value(it.loop)}, {"iteration", Value(it.iteration)}}));
    }
  }
  return Value(std::move(out));
}

Value optional_of(const std::optional<Value>& v) {
  return v ? *v : Value(nullptr);
}

Value kind_json(const Entry& e) {
  Value data{Object{}};
  switch (e.kind) {
    case EntryKind::kStep:
      data.set("output", optional_of(e.output));
      data.set("error", e.error ? Value(*e.error) : Value(nullptr));
      break;
    case EntryKind::kLoop:
      data.set("state", e.loop_state);
      data.set("iteration", Value(e.iteration));
      data.set("output", optional_of(e.output));
      break;
    case EntryKind::kSleep:
      data.set("deadline", Value(e.deadline));
      data.set("state", Value(std::string(to_string(e.sleep_state))));
      break;
    case EntryKind::kMessage:
      data.set("messages", optional_of(e.output));
      break;
    case EntryKind::kJoin:
      data.set("branches", e.branches);
      break;
    case EntryKind::kRace:
      data.set("winner", e.winner ? Value(*e.winner) : Value(nullptr));
      data.set("branches", e.branches);
      break;
    case EntryKind::kRemoved:
      data.set("originalType", Value(e.original_kind));
      data.set("originalName", e.original_name ? Value(*e.original_name) : Value(nullptr));
      break;
    case EntryKind::kVersionCheck:
      data.set("resolved", Value(e.resolved));
      data.set("latest", Value(e.latest));
      break;
    case EntryKind::kRollbackCheckpoint:
      data.set("name", Value(e.checkpoint));
      break;
  }
  return Value::object({{"type", Value(std::string(to_string(e.kind)))}, {"data", data}});
}

Value metadata_json(const Entry& e) {
  return Value::object(
      {{"status", Value(std::string(to_string(e.status)))},
       {"error", e.error ? Value(*e.error) : Value(nullptr)},
       {"attempts", Value(e.attempts)},
       {"lastAttemptAt", Value(e.last_attempt_at)},
       {"createdAt", Value(e.created_at)},
       {"completedAt", e.completed_at ? Value(*e.completed_at) : Value(nullptr)},
       {"rollbackCompletedAt",
        e.rollback_completed_at ? Value(*e.rollback_completed_at) : Value(nullptr)},
       {"rollbackError", e.rollback_error ? Value(*e.rollback_error) : Value(nullptr)}});
}

}  // namespace

Value history_json(const WorkflowHistory& history) {
  const auto ordered = history.in_creation_order();
  Array names;
  for (const auto& n : history.names()) {
    names.emplace_back(n);
  }
  Array entries;
  Value metadata{Object{}};
  for (const auto& [loc, e] : ordered) {
    entries.push_back(Value::object(
        {{"id", Value(e->id)}, {"location", location_json(*loc)}, {"kind", kind_json(*e)}}));
    metadata.set(e->id, metadata_json(*e));
  }
  return Value::object({{"nameRegistry", Value(std::move(names))},
                        {"entries", Value(std::move(entries))},
                        {"entryMetadata", std::move(metadata)}});
}

namespace {

using protocol::bare::Writer;

void optional_cbor(Writer& w, const std::optional<Value>& v) {
  w.optional_tag(v.has_value());
  if (v) {
    w.data(encode_stored(*v));
  }
}

void optional_str(Writer& w, const std::optional<std::string>& v) {
  w.optional_tag(v.has_value());
  if (v) {
    w.str(*v);
  }
}

std::uint64_t u64_of(std::int64_t v) {
  return v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

std::uint8_t branch_status_tag(const Value& status) {
  static constexpr std::string_view kNames[] = {"pending", "running", "completed", "failed",
                                                "cancelled"};
  const auto* s = status.find("status");
  for (std::uint8_t i = 0; i < 5; ++i) {
    if (s != nullptr && s->is_string() && s->as_string() == kNames[i]) {
      return i;
    }
  }
  return 0;
}

void branches(Writer& w, const Value& map) {
  const auto* members = map.is_object() ? &map.as_object() : nullptr;
  w.uint(members != nullptr ? members->size() : 0);
  if (members == nullptr) {
    return;
  }
  for (const auto& m : *members) {
    w.str(m.key);
    w.u8(branch_status_tag(m.value));
    const auto* output = m.value.find("output");
    optional_cbor(w, output != nullptr ? std::optional<Value>(*output) : std::nullopt);
    const auto* error = m.value.find("error");
    optional_str(w, error != nullptr && error->is_string()
                        ? std::optional<std::string>(error->as_string())
                        : std::nullopt);
  }
}

void kind(Writer& w, const Entry& e) {
  switch (e.kind) {
    case EntryKind::kStep:
      w.u8(0);
      optional_cbor(w, e.output);
      optional_str(w, e.error);
      break;
    case EntryKind::kLoop:
      w.u8(1);
      w.data(encode_stored(e.loop_state));
      w.u32(e.iteration);
      optional_cbor(w, e.output);
      break;
    case EntryKind::kSleep:
      w.u8(2);
      w.u64(u64_of(e.deadline));
      w.u8(static_cast<std::uint8_t>(e.sleep_state));
      break;
    case EntryKind::kMessage:
      w.u8(3);
      w.str("messages");
      w.data(encode_stored(e.output.value_or(Value(Array{}))));
      break;
    case EntryKind::kJoin:
      w.u8(5);
      branches(w, e.branches);
      break;
    case EntryKind::kRace:
      w.u8(6);
      optional_str(w, e.winner);
      branches(w, e.branches);
      break;
    case EntryKind::kRemoved:
      w.u8(7);
      w.str(e.original_kind);
      optional_str(w, e.original_name);
      break;
    case EntryKind::kVersionCheck:
      w.u8(8);
      w.u32(e.resolved);
      w.u32(e.latest);
      break;
    case EntryKind::kRollbackCheckpoint:
      w.u8(4);
      w.str(e.checkpoint);
      break;
  }
}

}  // namespace

std::string history_transport(const WorkflowHistory& history) {
  std::string out;
  Writer w(out);
  w.uint(history.names().size());
  for (const auto& n : history.names()) {
    w.str(n);
  }
  const auto ordered = history.in_creation_order();
  w.uint(ordered.size());
  for (const auto& [loc, e] : ordered) {
    w.str(e->id);
    const auto segments = location::parse(*loc).value_or(std::vector<location::Segment>{});
    w.uint(segments.size());
    for (const auto& segment : segments) {
      if (const auto* named = std::get_if<location::NameSegment>(&segment)) {
        w.u8(0);
        w.u32(named->name);
      } else {
        const auto& it = std::get<location::IterationSegment>(segment);
        w.u8(1);
        w.u32(it.loop);
        w.u32(it.iteration);
      }
    }
    kind(w, *e);
  }
  w.uint(ordered.size());
  for (const auto& [loc, e] : ordered) {
    w.str(e->id);
    w.u8(static_cast<std::uint8_t>(e->status));
    optional_str(w, e->error);
    w.u32(e->attempts);
    w.u64(u64_of(e->last_attempt_at));
    w.u64(u64_of(e->created_at));
    w.optional_tag(e->completed_at.has_value());
    if (e->completed_at) {
      w.u64(u64_of(*e->completed_at));
    }
    w.optional_tag(e->rollback_completed_at.has_value());
    if (e->rollback_completed_at) {
      w.u64(u64_of(*e->rollback_completed_at));
    }
    optional_str(w, e->rollback_error);
  }
  return out;
}

}  // namespace rivetkit::core::workflow
