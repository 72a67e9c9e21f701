#include "engine/record_codec.hpp"

#include "protocol/bare/bare.hpp"
#include "storage/runtime_records.hpp"

#include <algorithm>

namespace rivetkit::engine {

namespace bare = protocol::bare;

namespace {

constexpr std::uint8_t kRecordVersion = 1;

void write_opt(bare::Writer& w, const std::optional<std::string>& v) {
  w.optional_tag(v.has_value());
  if (v) {
    w.data(*v);
  }
}

bool read_opt(bare::Reader& r, std::optional<std::string>& v) {
  bool present = false;
  if (!r.optional_tag(present)) {
    return false;
  }
  if (present) {
    std::string s;
    if (!r.data(s)) {
      return false;
    }
    v = std::move(s);
  }
  return true;
}

// Every count is bounded by the bytes left (each element takes at least one byte).
bool read_count(bare::Reader& r, std::uint64_t& n) {
  return r.uint(n) && n <= r.remaining();
}

Error corrupt(std::string what) {
  return Error{"engine", "corrupt_record", "Stored actor record is corrupt: " + std::move(what),
               std::nullopt, false};
}

}  // namespace

std::string encode_record(const storage::PersistedActor& a) {
  std::string out;
  bare::Writer w(out);
  w.u8(kRecordVersion);
  w.boolean(a.has_initialized);
  write_opt(w, a.state);
  w.uint(a.conns.size());
  for (const auto& c : a.conns) {
    storage::runtime_records::write_conn_fields(w, c,
                                                storage::runtime_records::ConnLayout::kTwoIds);
  }
  w.uint(a.schedules.size());
  for (const auto& s : a.schedules) {
    storage::runtime_records::write_schedule_fields(w, s);
  }
  return out;
}

Result<storage::PersistedActor> decode_record(std::string_view bytes) {
  bare::Reader r(bytes);
  storage::PersistedActor a;
  std::uint8_t version = 0;
  if (!r.u8(version) || version != kRecordVersion) {
    return fail(corrupt("unknown version"));
  }
  r.boolean(a.has_initialized);
  read_opt(r, a.state);
  std::uint64_t n = 0;
  if (!read_count(r, n)) {
    return fail(corrupt("connection count"));
  }
  for (std::uint64_t i = 0; i < n && !r.failed(); ++i) {
    storage::PersistedConn c;
    if (!storage::runtime_records::read_conn_fields(
            r, c, storage::runtime_records::ConnLayout::kTwoIds)) {
      return fail(corrupt("connection"));
    }
    a.conns.push_back(std::move(c));
  }
  if (!read_count(r, n)) {
    return fail(corrupt("schedule count"));
  }
  for (std::uint64_t i = 0; i < n && !r.failed(); ++i) {
    storage::PersistedSchedule s;
    if (!storage::runtime_records::read_schedule_fields(r, s)) {
      return fail(corrupt("schedule"));
    }
    a.schedules.push_back(std::move(s));
  }
  if (r.failed() || !r.at_end()) {
    return fail(corrupt("truncated or trailing bytes"));
  }
  return a;
}

void apply_write(storage::PersistedActor& a, const storage::ActorWrite& w) {
  if (w.state) {
    a.state = *w.state;
  }
  if (w.has_initialized) {
    a.has_initialized = *w.has_initialized;
  }
  for (const auto& c : w.conn_upserts) {
    auto it = std::find_if(a.conns.begin(), a.conns.end(),
                           [&](const storage::PersistedConn& x) { return x.conn_id == c.conn_id; });
    if (it != a.conns.end()) {
      *it = c;
    } else {
      a.conns.push_back(c);
    }
  }
  for (const auto& id : w.conn_deletes) {
    std::erase_if(a.conns, [&](const storage::PersistedConn& x) { return x.conn_id == id; });
  }
  std::sort(a.conns.begin(), a.conns.end(),
            [](const auto& x, const auto& y) { return x.conn_id < y.conn_id; });
  for (const auto& s : w.schedule_upserts) {
    auto it =
        std::find_if(a.schedules.begin(), a.schedules.end(),
                     [&](const storage::PersistedSchedule& x) { return x.event_id == s.event_id; });
    if (it != a.schedules.end()) {
      *it = s;
    } else {
      a.schedules.push_back(s);
    }
  }
  for (const auto& id : w.schedule_deletes) {
    std::erase_if(a.schedules,
                  [&](const storage::PersistedSchedule& x) { return x.event_id == id; });
  }
  std::sort(a.schedules.begin(), a.schedules.end(), [](const auto& x, const auto& y) {
    return x.trigger_at != y.trigger_at ? x.trigger_at < y.trigger_at : x.event_id < y.event_id;
  });
}

}  // namespace rivetkit::engine
