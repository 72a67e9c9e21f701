// SQLite per actor (`c.db()`, include/rivetkit/database.hpp): the probes of tests/js
// (database.test.mjs). dbProbe: migrations, rows with state in one turn, typed values, errors,
// transactions, the sandbox, a page cache of 64 pages; dbSlow: a short action timeout; dbless: no
// database; dbBadMigration: a migration that fails; dbCodeMigration: steps written as code, one
// that reads the database to decide, one that throws on its first attempt in the process.

#include "fixture.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fixture {
namespace {

struct ProbeState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(ProbeState, count)

struct Item {
  std::int64_t id = 0;
  std::string name;
  std::optional<double> score;
};
RIVETKIT_FIELDS(Item, id, name, score)

rivetkit::Value error_value(const rivetkit::Error& e) {
  return rivetkit::Value::object(
      {{"ok", false}, {"group", e.group}, {"code", e.code}, {"message", e.message}});
}

rivetkit::Value result_value(const rivetkit::SqlResult& r) {
  rivetkit::Array columns;
  for (const auto& c : r.columns) {
    columns.emplace_back(c);
  }
  return rivetkit::Value::object({{"ok", true},
                                  {"columns", std::move(columns)},
                                  {"rows", r.objects()},
                                  {"changes", r.changes},
                                  {"lastInsertRowId", r.last_insert_row_id}});
}

// A page cache of 64 pages (256 KiB): the probe's larger databases are read through eviction.
rivetkit::DatabaseOptions probe_options() {
  rivetkit::DatabaseOptions options;
  options.page_cache_pages = 64;
  return options;
}

rivetkit::ActorDefinition db_probe() {
  return rivetkit::actor<ProbeState>("dbProbe")
      .database({{1,
                  "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
                  "score REAL)"},
                 {2, "CREATE TABLE wakes (at INTEGER NOT NULL)"}},
                probe_options())
      .on_wake([](auto& c) -> rivetkit::Task<void> {
        // The database is migrated before any hook runs.
        co_await c.db().execute("INSERT INTO wakes (at) VALUES (?)", now_ms());
      })
      // A row and the state in one turn: committed together.
      .action("add",
              [](auto& c, std::string name) -> rivetkit::Task<rivetkit::Value> {
                auto r = co_await c.db().execute("INSERT INTO items (name) VALUES (?)", name);
                c.state().count += 1;
                co_return rivetkit::Value::object(
                    {{"id", r.last_insert_row_id}, {"count", c.state().count}});
              })
      // `n` rows of about 2 KB in one statement and the state by `n`: in engine mode a turn of
      // a few hundred pages, more than one engine request (committed through the journal).
      .action("addMany",
              [](auto& c, std::string prefix, std::int64_t n) -> rivetkit::Task<std::int64_t> {
                auto op = c.db().execute(
                    "INSERT INTO items (name) WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT "
                    "i + 1 FROM s WHERE i < ?) SELECT ? || '-' || i || '-' || "
                    "hex(randomblob(1000)) FROM s",
                    n, prefix);
                co_await std::move(op);
                c.state().count += n;
                co_return c.state().count;
              })
      .action("addScored",
              [](auto& c, std::string name, double score) -> rivetkit::Task<std::int64_t> {
                rivetkit::Object params;
                params.push_back(rivetkit::Member{"name", name});
                params.push_back(rivetkit::Member{"score", score});
                auto op = c.db().execute_named(
                    "INSERT INTO items (name, score) VALUES (:name, :score)", std::move(params));
                auto r = co_await std::move(op);
                co_return r.last_insert_row_id;
              })
      .action("items",
              [](auto& c) -> rivetkit::Task<std::vector<Item>> {
                auto r = co_await c.db().execute("SELECT id, name, score FROM items ORDER BY id");
                co_return r.template as<Item>();
              })
      .action("counts",
              [](auto& c) -> rivetkit::Task<rivetkit::Value> {
                auto rows = co_await c.db().execute("SELECT count(*) AS n FROM items");
                auto wakes = co_await c.db().execute("SELECT count(*) AS n FROM wakes");
                co_return rivetkit::Value::object({{"rows", rows.rows.at(0).at(0)},
                                                   {"wakes", wakes.rows.at(0).at(0)},
                                                   {"state", c.read_state().count}});
              })
      // Any SQL with positional parameters; errors come back as values.
      .action(
          "sql",
          [](auto& c, std::string sql, rivetkit::Array params) -> rivetkit::Task<rivetkit::Value> {
            rivetkit::SqlParams p;
            p.positional = std::move(params);
            try {
              auto r = co_await rivetkit::detail::Access::api(c)->db().execute(std::move(sql),
                                                                               std::move(p));
              co_return result_value(r);
            } catch (const rivetkit::ActorError& e) {
              co_return error_value(e.error());
            }
          })
      // The same, errors thrown to the client.
      .action("sqlThrows",
              [](auto& c, std::string sql) -> rivetkit::Task<rivetkit::Array> {
                auto r = co_await c.db().execute(std::move(sql));
                co_return r.objects();
              })
      // Two rows in a transaction; `fail` throws after both: neither stays.
      .action("pair",
              [](auto& c, std::string name, bool fail) -> rivetkit::Task<std::int64_t> {
                auto n = co_await c.db().transaction(
                    [&](rivetkit::Transaction& tx) -> rivetkit::Task<std::int64_t> {
                      co_await tx.execute("INSERT INTO items (name) VALUES (?)", name);
                      co_await tx.execute("INSERT INTO items (name) VALUES (?)", name + "-2");
                      if (fail) {
                        throw rivetkit::UserError("the pair was refused", "pair_refused");
                      }
                      auto r = co_await tx.execute("SELECT count(*) FROM items");
                      co_return r.rows.at(0).at(0).as_int();
                    });
                co_return n;
              })
      // Statements of other calls wait while a transaction is open: the transaction's two
      // inserts are never split by the concurrent call's.
      .action("slowPair",
              [](auto& c, std::string name) -> rivetkit::Task<bool> {
                auto tx = co_await c.db().begin();
                co_await tx.execute("INSERT INTO items (name) VALUES (?)", name + "-a");
                co_await c.wait(std::chrono::milliseconds(300));
                co_await tx.execute("INSERT INTO items (name) VALUES (?)", name + "-b");
                co_await tx.commit();
                co_return true;
              })
      .action("names",
              [](auto& c) -> rivetkit::Task<std::vector<std::string>> {
                auto r = co_await c.db().execute("SELECT name FROM items ORDER BY id");
                std::vector<std::string> out;
                for (auto& row : r.rows) {
                  out.push_back(row.at(0).as_string());
                }
                co_return out;
              })
      .action("goToSleep", [](auto& c) { c.sleep(); })
      .action("destroy", [](auto& c) { c.destroy(); });
}

rivetkit::ActorDefinition db_slow() {
  rivetkit::ActorOptions options;
  options.action_timeout = std::chrono::milliseconds(1500);
  return rivetkit::actor("dbSlow")
      .database()
      .options(options)
      .action("spin",
              [](auto& c) -> rivetkit::Task<std::int64_t> {
                auto r = co_await c.db().execute(
                    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
                    "SELECT count(*) FROM n");
                co_return r.rows.at(0).at(0).as_int();
              })
      .action("ping", [](auto&) { return std::string("pong"); });
}

rivetkit::ActorDefinition dbless() {
  return rivetkit::actor("dbless").action("touch", [](auto& c) -> rivetkit::Task<bool> {
    co_await c.db().execute("SELECT 1");
    co_return true;
  });
}

rivetkit::ActorDefinition db_bad_migration() {
  return rivetkit::actor("dbBadMigration")
      .database({{1, "CREATE TABLE ok (v)"}, {2, "INSERT INTO missing_table VALUES (1)"}})
      .action("ping", [](auto&) { return std::string("pong"); });
}

// dbCodeMigration's third step throws on its first attempt in this process (whatever the key):
// the start fails, the step's work is rolled back, and the next start applies it.
std::atomic<int> g_code_step_attempts{0};

rivetkit::ActorDefinition db_code_migration() {
  return rivetkit::actor("dbCodeMigration")
      .database({{1, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"},
                 {2,
                  [](rivetkit::MigrationDb& db) {
                    // Reads before it writes: the decision a SQL-only step cannot make.
                    auto n = db.execute("SELECT count(*) FROM notes").rows.at(0).at(0).as_int();
                    db.execute("INSERT INTO notes (text) VALUES (?)",
                               "step 2 saw " + std::to_string(n) + " notes");
                    rivetkit::Object named;
                    named.push_back(rivetkit::Member{"t", std::string("named parameter")});
                    db.execute_named("INSERT INTO notes (text) VALUES (:t)", std::move(named));
                  }},
                 {3,
                  [](rivetkit::MigrationDb& db) {
                    db.execute("INSERT INTO notes (text) VALUES ('step 3')");
                    if (++g_code_step_attempts == 1) {
                      throw std::runtime_error("step 3 refuses its first attempt");
                    }
                  }}})
      .action("notes", [](auto& c) -> rivetkit::Task<std::vector<std::string>> {
        auto op = c.db().execute("SELECT text FROM notes ORDER BY id");
        auto r = co_await std::move(op);
        std::vector<std::string> out;
        for (auto& row : r.rows) {
          out.push_back(row.at(0).as_string());
        }
        co_return out;
      });
}

}  // namespace

void add_db_actors(rivetkit::Registry& registry) {
  registry.add(db_probe());
  registry.add(db_slow());
  registry.add(dbless());
  registry.add(db_bad_migration());
  registry.add(db_code_migration());
}

}  // namespace fixture
