// db-stress.ts: dbStressActor, SQL under load (large batches, many small writes, a kitchen sink of
// transactions with savepoints, rollbacks, deletes and VACUUM) racing sleep and destroy. The
// suite's Promise.all of statements becomes statements in a row: one actor's statements run one
// at a time in rivetkit-cpp anyway (as in RivetKit).

#include "fixture.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fixture {
namespace {

rivetkit::ActorOptions stress_options() {
  rivetkit::ActorOptions options;
  options.action_timeout = std::chrono::milliseconds(120'000);
  options.sleep_timeout = std::chrono::milliseconds(100);
  return options;
}

template <class Ctx>
rivetkit::Task<std::int64_t> first_int(Ctx& c, std::string sql) {
  auto op = c.db().execute(std::move(sql));
  auto r = co_await std::move(op);
  co_return r.rows.empty() ? 0 : r.rows[0].at(0).as_int();
}

template <class Ctx>
rivetkit::Task<void> run(Ctx& c, std::string sql) {
  auto op = c.db().execute(std::move(sql));
  co_await std::move(op);
}

constexpr const char* kUpsertMeta =
    "INSERT OR REPLACE INTO stress_meta_kv (key, value, updated_at) VALUES (?, ?, ?)";

rivetkit::ActorDefinition db_stress() {
  return rivetkit::actor("dbStressActor")
      .database({{1,
                  "CREATE TABLE IF NOT EXISTS stress_data (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                  "value TEXT NOT NULL, created_at INTEGER NOT NULL);"
                  "CREATE TABLE IF NOT EXISTS stress_meta_kv (key TEXT PRIMARY KEY, value TEXT "
                  "NOT NULL, updated_at INTEGER NOT NULL);"
                  "CREATE TABLE IF NOT EXISTS stress_payloads (id INTEGER PRIMARY KEY, tag TEXT "
                  "NOT NULL, payload TEXT NOT NULL, updated_at INTEGER NOT NULL)"}})
      .options(stress_options())
      .action("insertBatch",
              [](auto& c, std::int64_t count) -> rivetkit::Task<rivetkit::Value> {
                const auto now = std::to_string(now_ms());
                std::string sql = "INSERT INTO stress_data (value, created_at) VALUES ";
                for (std::int64_t i = 0; i < count; ++i) {
                  sql += (i == 0 ? "('row-" : ", ('row-") + std::to_string(i) + "', " + now + ")";
                }
                if (count > 0) {
                  {
                    auto step = run(c, std::move(sql));

                    co_await std::move(step);
                  }
                }
                co_return rivetkit::Value::object({{"count", count}});
              })
      .action("upsertMetaRows",
              [](auto& c, double count) -> rivetkit::Task<std::int64_t> {
                const auto n = std::max<std::int64_t>(0, static_cast<std::int64_t>(count));
                for (std::int64_t i = 0; i < n; ++i) {
                  auto op = c.db().execute(kUpsertMeta, "key-" + std::to_string(i % 32),
                                           "value-" + std::to_string(i), now_ms());
                  co_await std::move(op);
                }
                auto count_op = first_int(c, "SELECT COUNT(*) as count FROM stress_meta_kv");
                co_return co_await std::move(count_op);
              })
      .action(
          "kitchenSinkSmoke",
          [](auto& c, double rounds_in) -> rivetkit::Task<rivetkit::Value> {
            const auto rounds = std::max<std::int64_t>(1, static_cast<std::int64_t>(rounds_in));
            const auto started = now_ms();
            auto begin =
                c.db().execute(kUpsertMeta, "started-at", std::to_string(started), started);
            co_await std::move(begin);
            for (std::int64_t round = 0; round < rounds; ++round) {
              const auto now = started + round;
              auto a = c.db().execute(kUpsertMeta, "parallel-key-" + std::to_string(round % 17),
                                      "parallel-value-" + std::to_string(round), now);
              co_await std::move(a);
              auto b = c.db().execute("INSERT INTO stress_data (value, created_at) VALUES (?, ?)",
                                      "parallel-data-" + std::to_string(round), now);
              co_await std::move(b);
              {
                auto step = run(c, "SELECT COUNT(*) as count FROM stress_meta_kv");

                co_await std::move(step);
              }
              {
                auto step = run(c, "PRAGMA page_count");

                co_await std::move(step);
              }
              auto tx = c.db().transaction([&](rivetkit::Transaction& t) -> rivetkit::Task<void> {
                auto s1 = t.execute("INSERT INTO stress_data (value, created_at) VALUES (?, ?)",
                                    "tx-data-" + std::to_string(round), now);
                co_await std::move(s1);
                std::string payload(static_cast<std::size_t>(1024 + (round % 5) * 2048), 'x');
                auto s2 = t.execute(
                    "INSERT OR REPLACE INTO stress_payloads (id, tag, payload, updated_at) VALUES "
                    "(?, ?, ?, ?)",
                    round + 1, "payload-" + std::to_string(round), payload, now);
                co_await std::move(s2);
                auto s3 = t.execute("SAVEPOINT payload_patch");
                co_await std::move(s3);
                auto s4 = t.execute(
                    "UPDATE stress_payloads SET payload = payload || ?, updated_at = ? WHERE id = "
                    "?",
                    "-patch-" + std::to_string(round), now + 1, round + 1);
                co_await std::move(s4);
                auto s5 = t.execute("ROLLBACK TO payload_patch");
                co_await std::move(s5);
                auto s6 = t.execute("RELEASE payload_patch");
                co_await std::move(s6);
                auto s7 =
                    t.execute("UPDATE stress_meta_kv SET value = ?, updated_at = ? WHERE key = ?",
                              "tx-value-" + std::to_string(round), now + 2,
                              "parallel-key-" + std::to_string(round % 17));
                co_await std::move(s7);
              });
              co_await std::move(tx);
              try {
                auto rollback =
                    c.db().transaction([&](rivetkit::Transaction& t) -> rivetkit::Task<void> {
                      auto s =
                          t.execute("INSERT INTO stress_data (value, created_at) VALUES (?, ?)",
                                    "rollback-data-" + std::to_string(round), now);
                      co_await std::move(s);
                      throw std::runtime_error("intentional stress rollback");
                    });
                co_await std::move(rollback);
              } catch (const std::runtime_error& e) {
                if (std::string(e.what()) != "intentional stress rollback") {
                  throw;
                }
              }
              if (round % 3 == 0) {
                auto step = run(c,
                                "DELETE FROM stress_data WHERE id IN (SELECT id FROM stress_data "
                                "WHERE value LIKE 'parallel-data-%' ORDER BY id LIMIT 1)");
                co_await std::move(step);
              }
            }
            auto done =
                c.db().execute(kUpsertMeta, "completed-rounds", std::to_string(rounds), now_ms());
            co_await std::move(done);
            {
              auto step = run(c, "DELETE FROM stress_payloads WHERE id % 11 = 0");

              co_await std::move(step);
            }
            {
              auto step = run(c, "VACUUM");

              co_await std::move(step);
            }
            auto meta_op = first_int(c, "SELECT COUNT(*) as count FROM stress_meta_kv");
            const auto meta = co_await std::move(meta_op);
            auto data_op = first_int(c, "SELECT COUNT(*) as count FROM stress_data");
            const auto data = co_await std::move(data_op);
            auto payloads_op = first_int(c, "SELECT COUNT(*) as count FROM stress_payloads");
            const auto payloads = co_await std::move(payloads_op);
            auto pages_op = first_int(c, "PRAGMA page_count");
            const auto pages = co_await std::move(pages_op);
            auto integrity_op = c.db().execute("PRAGMA integrity_check");
            auto integrity = co_await std::move(integrity_op);
            co_return rivetkit::Value::object(
                {{"metaCount", meta},
                 {"dataCount", data},
                 {"payloadCount", payloads},
                 {"pageCount", pages},
                 {"integrity", integrity.rows.at(0).at(0).as_string()}});
          })
      .action("getCount",
              [](auto& c) { return first_int(c, "SELECT COUNT(*) as count FROM stress_data"); })
      .action("measureEventLoopHealth",
              [](auto& c, std::int64_t count) -> rivetkit::Task<rivetkit::Value> {
                const auto start = now_ms();
                for (std::int64_t i = 0; i < count; ++i) {
                  auto op =
                      c.db().execute("INSERT INTO stress_data (value, created_at) VALUES (?, ?)",
                                     "drift-" + std::to_string(i), now_ms());
                  co_await std::move(op);
                }
                co_return rivetkit::Value::object(
                    {{"elapsedMs", now_ms() - start}, {"insertCount", count}});
              })
      .action("writeAndVerify",
              [](auto& c, std::int64_t count) -> rivetkit::Task<std::int64_t> {
                const auto now = now_ms();
                for (std::int64_t i = 0; i < count; ++i) {
                  auto op =
                      c.db().execute("INSERT INTO stress_data (value, created_at) VALUES (?, ?)",
                                     "verify-" + std::to_string(i), now);
                  co_await std::move(op);
                }
                auto count_op = first_int(
                    c, "SELECT COUNT(*) as count FROM stress_data WHERE value LIKE 'verify-%'");
                co_return co_await std::move(count_op);
              })
      .action("integrityCheck",
              [](auto& c) -> rivetkit::Task<std::string> {
                auto op = c.db().execute("PRAGMA integrity_check");
                auto r = co_await std::move(op);
                co_return r.rows.at(0).at(0).as_string();
              })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("reset",
              [](auto& c) -> rivetkit::Task<void> {
                {
                  auto step = run(c, "DELETE FROM stress_data");

                  co_await std::move(step);
                }
                {
                  auto step = run(c, "DELETE FROM stress_meta_kv");

                  co_await std::move(step);
                }
                {
                  auto step = run(c, "DELETE FROM stress_payloads");

                  co_await std::move(step);
                }
              })
      .action("destroy", [](auto& c) { c.destroy(); });
}

}  // namespace

void add_db_stress_actors(rivetkit::Registry& registry) {
  registry.add(db_stress());
}

}  // namespace fixture
