#include "storage/records_migration.hpp"

#include "storage/actor_store.hpp"
#include "storage/runtime_records.hpp"
#include "storage/schema.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::storage {

namespace {

using sqlite::Statement;
using sqlite::StatementScope;

/// Every statement the move needs, prepared once.
struct Statements {
  Statement rids, state, conns, schedules, put, alarm;
};

Result<Statements> prepare_all(sqlite::Database& db) {
  Statements s;
  const std::pair<Statement*, std::string_view> all[] = {
      {&s.rids,
       "SELECT rid FROM actor_state UNION SELECT rid FROM actor_conns "
       "UNION SELECT rid FROM actor_schedules ORDER BY 1"},
      {&s.state, "SELECT has_initialized, state FROM actor_state WHERE rid = ?1"},
      {&s.conns,
       "SELECT conn_id, kind, encoding, params, state, subscriptions, request_path, "
       "request_headers, gateway_id, request_id, server_message_index, client_message_index "
       "FROM actor_conns WHERE rid = ?1"},
      {&s.schedules,
       "SELECT event_id, trigger_at, action, args, created_at, attempts FROM actor_schedules "
       "WHERE rid = ?1"},
      {&s.put, "INSERT OR REPLACE INTO actor_kv(rid, key, value) VALUES (?1, ?2, ?3)"},
      {&s.alarm, "UPDATE actors SET next_alarm = ?2 WHERE rid = ?1"},
  };
  for (const auto& [stmt, sql] : all) {
    auto prepared = db.prepare(sql);
    if (!prepared) {
      return fail(std::move(prepared.error()));
    }
    *stmt = std::move(*prepared);
  }
  return s;
}

Result<void> put(Statements& s,
                 std::int64_t rid,
                 const std::string& key,
                 const std::string& value) {
  StatementScope scope(s.put);
  s.put.bind_int64(1, rid);
  s.put.bind_blob(2, key);
  s.put.bind_blob(3, value);
  return s.put.run();
}

template <class Fn>
Result<void> rows(Statement& stmt, std::int64_t rid, Fn&& row) {
  StatementScope scope(stmt);
  stmt.bind_int64(1, rid);
  for (;;) {
    auto more = stmt.step();
    if (!more) {
      return fail(std::move(more.error()));
    }
    if (!*more) {
      return {};
    }
    if (auto r = row(stmt); !r) {
      return r;
    }
  }
}

template <class T>
T clamped(std::int64_t v, std::int64_t hi) {
  return static_cast<T>(v < 0 ? 0 : (v > hi ? hi : v));
}

Result<void> move_actor(Statements& s, std::int64_t rid) {
  constexpr std::uint32_t kEpoch = 0;
  runtime_records::Head head = runtime_records::owned_by(0);
  std::optional<std::string> state;
  auto state_row = rows(s.state, rid, [&](const Statement& row) -> Result<void> {
    head.has_initialized = row.column_int64(0) != 0;
    state = row.column_optional_blob(1);
    return {};
  });
  if (!state_row) {
    return state_row;
  }
  if (state && state->size() <= runtime_records::kInlineStateBytes) {
    head.form = runtime_records::StateForm::kInline;
    head.inline_state = std::move(*state);
  } else if (state) {
    head.form = runtime_records::StateForm::kChunked;
    head.size = state->size();
    head.chunks = static_cast<std::uint32_t>((state->size() + runtime_records::kChunkBytes - 1)
                                             / runtime_records::kChunkBytes);
    for (std::uint32_t c = 0; c < head.chunks; ++c) {
      if (auto r =
              put(s, rid, runtime_records::chunk_key(kEpoch, 0, c),
                  state->substr(c * runtime_records::kChunkBytes, runtime_records::kChunkBytes));
          !r) {
        return r;
      }
    }
  }
  auto conns = rows(s.conns, rid, [&](const Statement& row) -> Result<void> {
    PersistedConn c;
    c.conn_id = row.column_text(0);
    c.kind = row.column_text(1);
    c.encoding = row.column_text(2);
    c.params = row.column_blob(3);
    c.state = row.column_blob(4);
    auto subscriptions = decode_subscriptions(row.column_blob(5));
    if (!subscriptions) {
      return fail(std::move(subscriptions.error()));
    }
    c.subscriptions = std::move(*subscriptions);
    c.request_path = row.column_text(6);
    c.request_headers = row.column_blob(7);
    c.tunnel_id = row.column_blob(8) + row.column_blob(9);
    c.server_message_index = clamped<std::uint16_t>(row.column_int64(10), 65535);
    c.client_message_index = clamped<std::uint16_t>(row.column_int64(11), 65535);
    return put(s, rid, runtime_records::conn_key(kEpoch, c.conn_id),
               runtime_records::encode_conn(c));
  });
  if (!conns) {
    return conns;
  }
  std::optional<std::int64_t> next_alarm;
  auto schedules = rows(s.schedules, rid, [&](const Statement& row) -> Result<void> {
    PersistedSchedule e;
    e.event_id = row.column_text(0);
    e.trigger_at = row.column_int64(1);
    e.action = row.column_text(2);
    e.args = row.column_optional_blob(3);
    e.created_at = row.column_int64(4);
    e.attempts = clamped<std::uint32_t>(row.column_int64(5), 4294967295);
    if (!next_alarm || e.trigger_at < *next_alarm) {
      next_alarm = e.trigger_at;
    }
    return put(s, rid, runtime_records::schedule_key(kEpoch, e.event_id),
               runtime_records::encode_schedule(e));
  });
  if (!schedules) {
    return schedules;
  }
  if (auto r = put(s, rid, runtime_records::head_key(kEpoch), runtime_records::encode_head(head));
      !r) {
    return r;
  }
  StatementScope scope(s.alarm);
  s.alarm.bind_int64(1, rid);
  s.alarm.bind_optional_int64(2, next_alarm);
  return s.alarm.run();
}

}  // namespace

Result<void> move_records_into_keys(sqlite::Database& db) {
  std::vector<std::int64_t> rids;
  {
    auto s = prepare_all(db);
    if (!s) {
      return fail(std::move(s.error()));
    }
    StatementScope scope(s->rids);
    for (;;) {
      auto more = s->rids.step();
      if (!more) {
        return fail(std::move(more.error()));
      }
      if (!*more) {
        break;
      }
      rids.push_back(s->rids.column_int64(0));
    }
    for (std::int64_t rid : rids) {
      if (auto r = move_actor(*s, rid); !r) {
        Error e = std::move(r.error());
        e.message = fmt::format("actor rid {}: {}", rid, e.message);
        return fail(std::move(e));
      }
    }
  }  // the statements are finalized before the tables they read are dropped
  return db.exec("DROP TABLE actor_state; DROP TABLE actor_conns; DROP TABLE actor_schedules;");
}

}  // namespace rivetkit::storage
