// actor-db-raw.ts: dbActorRaw, the suite's main SQL actor (table test_data), on c.db(). Ported:
// CRUD, transactions (commit, rollback on a throw, several statements, automatic rollback,
// queued concurrent transactions, ordinary SQL parked behind one, a finished handle, manual
// BEGIN/COMMIT across calls, transaction timeouts: deadlock and expiry diagnostics), payloads and
// workloads, maintenance (page count, VACUUM, integrity check), the disconnect insert and
// lifecycle actions; and dbActorManualWarningsDisabled. Not ported: the Actor Runtime Socket
// (TypeScript's: catalogue.md) and the transaction hold actions (only the socket tests use them).

#include "fixture.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fixture {
namespace {

struct RawState {
  bool disconnectInsertEnabled = false;
  std::int64_t disconnectInsertDelayMs = 0;
  std::optional<std::string> lifecycleObserverKey;
  bool transactionHolding = false;
};
RIVETKIT_FIELDS(RawState,
                disconnectInsertEnabled,
                disconnectInsertDelayMs,
                lifecycleObserverKey,
                transactionHolding)

using RawTypes = rivetkit::ActorTypes<RawState>;

constexpr const char* kInsert =
    "INSERT INTO test_data (value, payload, created_at) VALUES (?, ?, ?)";

rivetkit::Task<std::int64_t> count_where(rivetkit::Context<RawTypes>& c, std::string sql) {
  auto op = c.db().execute(std::move(sql));
  auto r = co_await std::move(op);
  co_return r.rows.empty() ? 0 : r.rows[0].at(0).as_int();
}

rivetkit::Task<void> record_lifecycle(rivetkit::Context<RawTypes> c, std::string event) {
  const auto& observer = c.read_state().lifecycleObserverKey;
  if (!observer) {
    co_return;
  }
  auto op = tell(c.client(), "lifecycleObserver", {*observer}, "recordEvent",
                 rivetkit::Value::object({{"actorKey", joined_key(c.key())}, {"event", event}}));
  co_await std::move(op);
}

rivetkit::Task<std::vector<std::string>> values_in_order(rivetkit::Context<RawTypes> c) {
  auto op = c.db().execute("SELECT value FROM test_data ORDER BY id");
  auto r = co_await std::move(op);
  std::vector<std::string> out;
  for (auto& row : r.rows) {
    out.push_back(row.at(0).as_string());
  }
  co_return out;
}

// One transaction inserting `value`.
rivetkit::Task<void> insert_in_transaction(rivetkit::Context<RawTypes> c, std::string value) {
  auto op = c.db().transaction([&](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
    auto insert = tx.execute("INSERT INTO test_data (value, payload, created_at) VALUES (?, '', ?)",
                             value, now_ms());
    co_await std::move(insert);
  });
  co_await std::move(op);
}

// A transaction that inserts `first`, says so, waits 20 ms and inserts `last`.
rivetkit::Task<void> slow_transaction(rivetkit::Context<RawTypes> c,
                                      std::string first,
                                      std::string last,
                                      std::shared_ptr<rivetkit::detail::Latch> started) {
  auto op = c.db().transaction([&](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
    auto a = tx.execute("INSERT INTO test_data (value, payload, created_at) VALUES (?, '', ?)",
                        first, now_ms());
    co_await std::move(a);
    started->set();
    co_await c.wait(std::chrono::milliseconds(20));
    auto b = tx.execute("INSERT INTO test_data (value, payload, created_at) VALUES (?, '', ?)",
                        last, now_ms());
    co_await std::move(b);
  });
  co_await std::move(op);
}

rivetkit::Task<void> ordinary_insert(rivetkit::Context<RawTypes> c,
                                     std::string value,
                                     std::shared_ptr<rivetkit::detail::Latch> after) {
  co_await after->wait();
  auto op = c.db().execute("INSERT INTO test_data (value, payload, created_at) VALUES (?, '', ?)",
                           value, now_ms());
  co_await std::move(op);
}

// A statement that waits behind an open transaction; records whether it ran or was rejected.
rivetkit::Task<void> park_insert(rivetkit::Context<RawTypes> c,
                                 std::shared_ptr<rivetkit::Value> result) {
  try {
    auto op = c.db().execute(
        "INSERT INTO test_data (value, payload, created_at) VALUES ('must-not-run', '', ?)",
        now_ms());
    co_await std::move(op);
    *result = rivetkit::Value::object({{"status", "executed"}});
  } catch (const rivetkit::ActorError& e) {
    *result = rivetkit::Value::object({{"status", "rejected"}, {"message", e.error().message}});
  }
}

rivetkit::ActorDefinition db_actor_raw() {
  rivetkit::ActorOptions options;
  options.action_timeout = std::chrono::milliseconds(120'000);
  options.sleep_timeout = std::chrono::milliseconds(100);
  return rivetkit::actor<RawTypes>("dbActorRaw")
      .database({{1,
                  "CREATE TABLE IF NOT EXISTS test_data (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                  "value TEXT NOT NULL, payload TEXT NOT NULL DEFAULT '', created_at INTEGER NOT "
                  "NULL)"}})
      .options(options)
      .on_wake([](auto& c) { return record_lifecycle(c, "wake"); })
      .on_sleep([](auto& c) { return record_lifecycle(c, "sleep"); })
      .on_disconnect([](auto& c, auto&) -> rivetkit::Task<void> {
        if (!c.read_state().disconnectInsertEnabled) {
          co_return;
        }
        if (c.read_state().disconnectInsertDelayMs > 0) {
          co_await c.wait(std::chrono::milliseconds(c.read_state().disconnectInsertDelayMs));
        }
        auto op = c.db().execute(kInsert, "__disconnect__", "", now_ms());
        co_await std::move(op);
      })
      .action("configureDisconnectInsert",
              [](auto& c, bool enabled, double delay_ms) {
                c.state().disconnectInsertEnabled = enabled;
                c.state().disconnectInsertDelayMs =
                    std::max<std::int64_t>(0, static_cast<std::int64_t>(delay_ms));
              })
      .action("configureLifecycleObserver",
              [](auto& c, std::optional<std::string> key) {
                c.state().lifecycleObserverKey = std::move(key);
              })
      .action("getDisconnectInsertCount",
              [](auto& c) {
                return count_where(
                    c, "SELECT COUNT(*) as count FROM test_data WHERE value = '__disconnect__'");
              })
      .action("reset",
              [](auto& c) -> rivetkit::Task<void> {
                auto op = c.db().execute("DELETE FROM test_data");
                co_await std::move(op);
              })
      .action("insertValue",
              [](auto& c, std::string value) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.db().execute(kInsert, value, "", now_ms());
                auto r = co_await std::move(op);
                co_return rivetkit::Value::object({{"id", r.last_insert_row_id}});
              })
      .action("insertValueAndReadBack",
              [](auto& c, std::string value) -> rivetkit::Task<rivetkit::Value> {
                auto insert = c.db().execute(kInsert, value, "", now_ms());
                co_await std::move(insert);
                auto read = c.db().execute(
                    "SELECT id, value, hex(value) as hex_value, length(value) as sqlite_length "
                    "FROM test_data ORDER BY id DESC LIMIT 1");
                auto r = co_await std::move(read);
                auto rows = r.objects();
                co_return rows.empty() ? rivetkit::Value(nullptr) : rows[0];
              })
      .action("getValues",
              [](auto& c) -> rivetkit::Task<rivetkit::Array> {
                auto op = c.db().execute("SELECT * FROM test_data ORDER BY id");
                auto r = co_await std::move(op);
                co_return r.objects();
              })
      .action("getValue",
              [](auto& c, std::int64_t id) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.db().execute("SELECT value FROM test_data WHERE id = ?", id);
                auto r = co_await std::move(op);
                co_return r.rows.empty() ? rivetkit::Value(nullptr) : r.rows[0].at(0);
              })
      .action("getCount",
              [](auto& c) { return count_where(c, "SELECT COUNT(*) as count FROM test_data"); })
      .action("rawSelectCount",
              [](auto& c) { return count_where(c, "SELECT COUNT(*) as count FROM test_data"); })
      .action("insertMany",
              [](auto& c, std::int64_t count) -> rivetkit::Task<rivetkit::Value> {
                if (count <= 0) {
                  co_return rivetkit::Value::object({{"count", 0}});
                }
                const auto now = std::to_string(now_ms());
                std::string sql = "INSERT INTO test_data (value, payload, created_at) VALUES ";
                for (std::int64_t i = 0; i < count; ++i) {
                  sql += (i == 0 ? "" : ", ") + std::string("('User ") + std::to_string(i)
                         + "', '', " + now + ")";
                }
                auto op = c.db().execute(std::move(sql));
                co_await std::move(op);
                co_return rivetkit::Value::object({{"count", count}});
              })
      .action("updateValue",
              [](auto& c, std::int64_t id, std::string value) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.db().execute("UPDATE test_data SET value = ? WHERE id = ?", value, id);
                co_await std::move(op);
                co_return rivetkit::Value::object({{"success", true}});
              })
      .action("deleteValue",
              [](auto& c, std::int64_t id) -> rivetkit::Task<void> {
                auto op = c.db().execute("DELETE FROM test_data WHERE id = ?", id);
                co_await std::move(op);
              })
      .action("transactionCommit",
              [](auto& c, std::string value) -> rivetkit::Task<void> {
                auto op =
                    c.db().transaction([&](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
                      auto insert = tx.execute(
                          "INSERT INTO test_data (value, payload, created_at) VALUES (?, '', ?)",
                          value, now_ms());
                      co_await std::move(insert);
                    });
                co_await std::move(op);
              })
      .action("transactionRollback",
              [](auto& c, std::string value) -> rivetkit::Task<void> {
                try {
                  auto op =
                      c.db().transaction([&](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
                        auto insert = tx.execute(
                            "INSERT INTO test_data (value, payload, created_at) VALUES (?, '', ?)",
                            value, now_ms());
                        co_await std::move(insert);
                        throw std::runtime_error("expected rollback");
                      });
                  co_await std::move(op);
                } catch (const std::runtime_error& e) {
                  if (std::string(e.what()) != "expected rollback") {
                    throw;
                  }
                }
              })
      .action("transactionWithTimeout",
              [](auto& c, double timeout_ms) -> rivetkit::Task<void> {
                auto op = c.db().transaction(
                    [](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
                      auto select = tx.execute("SELECT 1");
                      co_await std::move(select);
                    },
                    std::chrono::milliseconds(static_cast<std::int64_t>(timeout_ms)));
                co_await std::move(op);
              })
      .action("transactionExec",
              [](auto& c) -> rivetkit::Task<std::vector<std::string>> {
                const auto now = std::to_string(now_ms());
                auto op =
                    c.db().transaction([&](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
                      auto both = tx.execute(
                      "INSERT INTO test_data (value, payload, created_at) VALUES ('exec-first', '', " +
                      now +
                      ");\nINSERT INTO test_data (value, payload, created_at) VALUES "
                      "('exec-second', '', " +
                      now + ");");
                      co_await std::move(both);
                    });
                co_await std::move(op);
                auto read = c.db().execute("SELECT value FROM test_data ORDER BY id");
                auto r = co_await std::move(read);
                std::vector<std::string> out;
                for (auto& row : r.rows) {
                  out.push_back(row.at(0).as_string());
                }
                co_return out;
              })
      .action("transactionAutomaticRollback",
              [](auto& c) -> rivetkit::Task<rivetkit::Array> {
                auto setup = c.db().execute(
                    "CREATE TABLE IF NOT EXISTS transaction_rollback_probe (id INTEGER PRIMARY "
                    "KEY, value TEXT NOT NULL); DELETE FROM transaction_rollback_probe;");
                co_await std::move(setup);
                try {
                  auto op =
                      c.db().transaction([](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
                        auto a = tx.execute(
                            "INSERT INTO transaction_rollback_probe(id, value) VALUES (1, "
                            "'first')");
                        co_await std::move(a);
                        auto b = tx.execute(
                            "INSERT OR ROLLBACK INTO transaction_rollback_probe(id, value) VALUES "
                            "(1, 'duplicate')");
                        co_await std::move(b);
                      });
                  co_await std::move(op);
                } catch (const rivetkit::ActorError&) {
                  // SQLite's ROLLBACK conflict policy already ended the transaction.
                }
                auto after = c.db().execute(
                    "INSERT INTO transaction_rollback_probe(id, value) VALUES (2, 'after')");
                co_await std::move(after);
                auto read =
                    c.db().execute("SELECT id, value FROM transaction_rollback_probe ORDER BY id");
                auto r = co_await std::move(read);
                co_return r.objects();
              })
      .action("concurrentTransactions",
              [](auto& c) -> rivetkit::Task<std::vector<std::string>> {
                auto started = rivetkit::detail::Access::api(c)->make_latch();
                auto first = c.keep_awake(slow_transaction(c, "first-start", "first-end", started));
                co_await started->wait();
                auto second = c.keep_awake(insert_in_transaction(c, "second"));
                auto third = c.keep_awake(insert_in_transaction(c, "third"));
                co_await first.result();
                co_await second.result();
                co_await third.result();
                auto op = values_in_order(c);
                co_return co_await std::move(op);
              })
      .action("transactionParksOrdinarySql",
              [](auto& c) -> rivetkit::Task<std::vector<std::string>> {
                auto started = rivetkit::detail::Access::api(c)->make_latch();
                auto tx = c.keep_awake(slow_transaction(c, "tx-start", "tx-end", started));
                auto ordinary = c.keep_awake(ordinary_insert(c, "ordinary", started));
                co_await tx.result();
                co_await ordinary.result();
                auto op = values_in_order(c);
                co_return co_await std::move(op);
              })
      .action("transactionDeadlockDiagnostic",
              [](auto& c, bool nested) -> rivetkit::Task<std::string> {
                try {
                  auto op = c.db().transaction(
                      [&](rivetkit::Transaction&) -> rivetkit::Task<void> {
                        if (nested) {
                          auto inner = c.db().transaction(
                              [](rivetkit::Transaction&) -> rivetkit::Task<void> { co_return; });
                          co_await std::move(inner);
                        } else {
                          auto outer = c.db().execute("SELECT 1");
                          co_await std::move(outer);
                        }
                      },
                      std::chrono::milliseconds(50));
                  co_await std::move(op);
                  co_return std::string("unexpected success");
                } catch (const rivetkit::ActorError& e) {
                  co_return e.error().message;
                }
              })
      .action(
          "transactionExpiryDiagnostics",
          [](auto& c) -> rivetkit::Task<rivetkit::Value> {
            auto parked = std::make_shared<rivetkit::Value>(nullptr);
            std::optional<rivetkit::BackgroundTask<void>> parked_task;
            std::string owner_message = "unexpected success";
            auto tx_op = c.db().begin(std::chrono::milliseconds(50));
            auto tx = co_await std::move(tx_op);
            try {
              auto insert = tx.execute(
                  "INSERT INTO test_data (value, payload, created_at) VALUES "
                  "('rolled-back-owner', '', ?)",
                  now_ms());
              co_await std::move(insert);
              parked_task.emplace(c.keep_awake(park_insert(c, parked)));
              co_await c.wait(std::chrono::milliseconds(80));
              auto select = tx.execute("SELECT 1");
              co_await std::move(select);
              co_await tx.commit();
            } catch (const rivetkit::ActorError& e) {
              owner_message = e.error().message;
            }
            if (parked_task) {
              co_await parked_task->result();
            }
            std::string leaked_message = "unexpected success";
            try {
              auto again = tx.execute("SELECT 1");
              co_await std::move(again);
            } catch (const rivetkit::ActorError& e) {
              leaked_message = e.error().message;
            }
            auto read = c.db().execute(
                "SELECT value FROM test_data WHERE value IN ('rolled-back-owner', 'must-not-run') "
                "ORDER BY value");
            auto r = co_await std::move(read);
            rivetkit::Array values;
            for (auto& row : r.rows) {
              values.push_back(row.at(0));
            }
            co_return rivetkit::Value::object({{"ownerMessage", owner_message},
                                               {"parkedResult", *parked},
                                               {"leakedMessage", leaked_message},
                                               {"values", std::move(values)}});
          })
      .action("terminalTransactionDiagnostic",
              [](auto& c) -> rivetkit::Task<std::string> {
                auto tx_op = c.db().begin();
                auto tx = co_await std::move(tx_op);
                auto select = tx.execute("SELECT 1");
                co_await std::move(select);
                co_await tx.commit();
                try {
                  auto again = tx.execute("SELECT 1");
                  co_await std::move(again);
                  co_return std::string("unexpected success");
                } catch (const rivetkit::ActorError& e) {
                  co_return e.error().message;
                }
              })
      .action("manualTransactionCompatibility",
              [](auto& c) -> rivetkit::Task<std::int64_t> {
                auto begin = c.db().execute("BEGIN");
                co_await std::move(begin);
                std::exception_ptr failed;
                try {
                  auto insert = c.db().execute(
                      "INSERT INTO test_data (value, payload, created_at) VALUES "
                      "('manual-compatible', '', ?)",
                      now_ms());
                  co_await std::move(insert);
                  auto commit = c.db().execute("COMMIT");
                  co_await std::move(commit);
                } catch (...) {
                  failed = std::current_exception();
                }
                if (failed) {
                  auto rollback = c.db().execute("ROLLBACK");
                  co_await std::move(rollback);
                  std::rethrow_exception(failed);
                }
                auto op = count_where(
                    c, "SELECT count(*) AS count FROM test_data WHERE value = 'manual-compatible'");
                co_return co_await std::move(op);
              })
      .action("roundRobinUpdateValues",
              [](auto& c, std::vector<double> ids,
                 double iterations) -> rivetkit::Task<rivetkit::Array> {
                std::vector<std::int64_t> rows;
                for (double id : ids) {
                  auto v = static_cast<std::int64_t>(id);
                  if (v > 0 && std::find(rows.begin(), rows.end(), v) == rows.end()) {
                    rows.push_back(v);
                  }
                }
                const auto n = std::max<std::int64_t>(0, static_cast<std::int64_t>(iterations));
                if (rows.empty() || n == 0) {
                  co_return rivetkit::Array{};
                }
                auto op =
                    c.db().transaction([&](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
                      for (std::int64_t i = 0; i < n; ++i) {
                        auto update = tx.execute("UPDATE test_data SET value = ? WHERE id = ?",
                                                 "v-" + std::to_string(i),
                                                 rows[static_cast<std::size_t>(i) % rows.size()]);
                        co_await std::move(update);
                      }
                    });
                co_await std::move(op);
                std::string in;
                for (auto id : rows) {
                  in += (in.empty() ? "" : ",") + std::to_string(id);
                }
                auto read = c.db().execute("SELECT id, value FROM test_data WHERE id IN (" + in
                                           + ") ORDER BY id");
                auto r = co_await std::move(read);
                co_return r.objects();
              })
      .action(
          "runMixedWorkload",
          [](auto& c, double seed_count, double churn_count) -> rivetkit::Task<void> {
            const auto seeds = std::max<std::int64_t>(1, static_cast<std::int64_t>(seed_count));
            const auto churn = std::max<std::int64_t>(0, static_cast<std::int64_t>(churn_count));
            const auto now = now_ms();
            auto op = c.db().transaction([&](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
              const std::string upsert =
                  "INSERT OR REPLACE INTO test_data (id, value, payload, created_at) VALUES "
                  "(?, ?, ?, ?)";
              for (std::int64_t i = 0; i < seeds; ++i) {
                std::string payload(static_cast<std::size_t>(1024 + (i % 5) * 128), 'x');
                auto put = tx.execute(upsert, i + 1, "seed-" + std::to_string(i), payload, now);
                co_await std::move(put);
              }
              for (std::int64_t i = 0; i < churn; ++i) {
                const auto id = (i % seeds) + 1;
                if (i % 9 == 0) {
                  auto del = tx.execute("DELETE FROM test_data WHERE id = ?", id);
                  co_await std::move(del);
                } else {
                  std::string payload(static_cast<std::size_t>(768 + (i % 7) * 96), 'x');
                  auto put = tx.execute(upsert, id, "upd-" + std::to_string(i), payload, now + i);
                  co_await std::move(put);
                }
              }
            });
            co_await std::move(op);
          })
      .action("insertPayloadOfSize",
              [](auto& c, std::int64_t size) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.db().execute(
                    kInsert, "payload",
                    std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, size)), 'x'),
                    now_ms());
                auto r = co_await std::move(op);
                co_return rivetkit::Value::object({{"id", r.last_insert_row_id}, {"size", size}});
              })
      .action("getPayloadSize",
              [](auto& c, std::int64_t id) -> rivetkit::Task<std::int64_t> {
                auto op = c.db().execute(
                    "SELECT length(payload) as size FROM test_data WHERE id = ?", id);
                auto r = co_await std::move(op);
                co_return r.rows.empty() ? 0 : r.rows[0].at(0).as_int();
              })
      .action(
          "insertPayloadRows",
          [](auto& c, std::int64_t count, std::int64_t size) -> rivetkit::Task<rivetkit::Value> {
            const auto n = std::max<std::int64_t>(0, count);
            const std::string payload(static_cast<std::size_t>(std::max<std::int64_t>(0, size)),
                                      'x');
            const auto now = now_ms();
            for (std::int64_t i = 0; i < n; ++i) {
              auto op = c.db().execute(kInsert, "bulk-" + std::to_string(i), payload, now);
              co_await std::move(op);
            }
            co_return rivetkit::Value::object({{"count", n}});
          })
      .action("repeatUpdate",
              [](auto& c, std::int64_t id, std::int64_t count) -> rivetkit::Task<rivetkit::Value> {
                std::string value;
                if (count <= 0) {
                  co_return rivetkit::Value::object({{"value", value}});
                }
                std::string sql = "BEGIN";
                for (std::int64_t i = 0; i < count; ++i) {
                  value = "Updated " + std::to_string(i);
                  sql += "; UPDATE test_data SET value = '" + value
                         + "' WHERE id = " + std::to_string(id);
                }
                sql += "; COMMIT";
                auto op = c.db().execute(std::move(sql));
                co_await std::move(op);
                co_return rivetkit::Value::object({{"value", value}});
              })
      .action(
          "multiStatementInsert",
          [](auto& c, std::string value) -> rivetkit::Task<rivetkit::Value> {
            auto op = c.db().execute(
                "BEGIN; INSERT INTO test_data (value, payload, created_at) VALUES (?1, '', ?2); "
                "UPDATE test_data SET value = ?1 || '-updated' WHERE id = last_insert_rowid(); "
                "COMMIT;",
                value, now_ms());
            co_await std::move(op);
            auto read = c.db().execute("SELECT value FROM test_data ORDER BY id DESC LIMIT 1");
            auto r = co_await std::move(read);
            co_return r.rows.empty() ? rivetkit::Value(nullptr) : r.rows[0].at(0);
          })
      .action("getPageCount",
              [](auto& c) -> rivetkit::Task<std::int64_t> {
                auto op = c.db().execute("PRAGMA page_count");
                auto r = co_await std::move(op);
                co_return r.rows.at(0).at(0).as_int();
              })
      .action("vacuum",
              [](auto& c) -> rivetkit::Task<void> {
                auto op = c.db().execute("VACUUM");
                co_await std::move(op);
              })
      .action("integrityCheck",
              [](auto& c) -> rivetkit::Task<std::string> {
                auto op = c.db().execute("PRAGMA integrity_check");
                auto r = co_await std::move(op);
                co_return r.rows.at(0).at(0).as_string();
              })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("destroy", [](auto& c) { c.destroy(); })
      .action("ping", [](auto&) { return std::string("pong"); });
}

rivetkit::ActorDefinition db_actor_manual_warnings_disabled() {
  rivetkit::DatabaseOptions options;
  options.warn_on_manual_transactions = false;
  return rivetkit::actor("dbActorManualWarningsDisabled")
      .database({}, options)
      .action("manualTransactionCompatibility",
              [](auto& c, std::string marker) -> rivetkit::Task<bool> {
                auto begin = c.db().execute("BEGIN");
                co_await std::move(begin);
                auto select = c.db().execute("SELECT 1");
                co_await std::move(select);
                auto commit = c.db().execute("COMMIT");
                co_await std::move(commit);
                std::printf("%s\n", marker.c_str());
                std::fflush(stdout);
                co_return true;
              });
}

}  // namespace

void add_db_raw_actors(rivetkit::Registry& registry) {
  registry.add(db_actor_raw());
  registry.add(db_actor_manual_warnings_disabled());
}

}  // namespace fixture
