// db-lifecycle.ts, db-pragma-migration.ts, db-init-order.ts, scheduled-db.ts: dbLifecycle
// (sleep/destroy churn with a database), dbPragmaMigrationActor (two versioned migrations; the
// version is read from rivetkit-cpp's own record, `_rivetkit_migrations`, where RivetKit's helper
// keeps its `items_schema_version` table), and the dbInitOrder family (the database usable in every
// hook, the teardown hooks' observations kept in process memory for dbInitOrderObserver),
// scheduledDb (a scheduled action using the database), and from actor-db-drizzle-transaction.ts
// dbActorDrizzleMigrationRollback as a migration step written as code (Drizzle is TypeScript-only;
// the test is about a failed step being rolled back before the retry). Not ported:
// dbLifecycleFailing and dbLifecycleObserver (registered by the suite, used by no test; they count
// RivetKit's database-provider callbacks).

#include "fixture.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace fixture {
namespace {

rivetkit::ActorOptions db_options(std::int64_t sleep_ms) {
  rivetkit::ActorOptions options;
  options.action_timeout = std::chrono::milliseconds(120'000);
  options.sleep_timeout = std::chrono::milliseconds(sleep_ms);
  return options;
}

template <class Ctx>
rivetkit::Task<std::int64_t> count_rows(Ctx& c, std::string sql) {
  auto op = c.db().execute(std::move(sql));
  auto r = co_await std::move(op);
  co_return r.rows.empty() ? -1 : r.rows[0].at(0).as_int();
}

rivetkit::ActorDefinition db_lifecycle() {
  return rivetkit::actor("dbLifecycle")
      .database({{1,
                  "CREATE TABLE IF NOT EXISTS lifecycle_data (id INTEGER PRIMARY KEY "
                  "AUTOINCREMENT, value TEXT NOT NULL, created_at INTEGER NOT NULL)"}})
      .options(db_options(1000))
      .action("getActorId", [](auto& c) { return c.actor_id(); })
      .action("ping", [](auto&) { return std::string("pong"); })
      .action("insertValue",
              [](auto& c, std::string value) -> rivetkit::Task<void> {
                auto op =
                    c.db().execute("INSERT INTO lifecycle_data (value, created_at) VALUES (?, ?)",
                                   value, now_ms());
                co_await std::move(op);
              })
      .action("getCount",
              [](auto& c) { return count_rows(c, "SELECT COUNT(*) as count FROM lifecycle_data"); })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("triggerDestroy", [](auto& c) { c.destroy(); });
}

rivetkit::ActorDefinition db_pragma_migration() {
  return rivetkit::actor("dbPragmaMigrationActor")
      .database(
          {{1, "CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL)"},
           {2, "ALTER TABLE items ADD COLUMN status TEXT NOT NULL DEFAULT 'active'"}})
      .options(db_options(100))
      .action("insertItem",
              [](auto& c, std::string name) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.db().execute("INSERT INTO items (name) VALUES (?)", name);
                auto r = co_await std::move(op);
                co_return rivetkit::Value::object({{"id", r.last_insert_row_id}});
              })
      .action("insertItemWithStatus",
              [](auto& c, std::string name, std::string status) -> rivetkit::Task<rivetkit::Value> {
                auto op =
                    c.db().execute("INSERT INTO items (name, status) VALUES (?, ?)", name, status);
                auto r = co_await std::move(op);
                co_return rivetkit::Value::object({{"id", r.last_insert_row_id}});
              })
      .action("getItems",
              [](auto& c) -> rivetkit::Task<rivetkit::Array> {
                auto op = c.db().execute("SELECT id, name, status FROM items ORDER BY id");
                auto r = co_await std::move(op);
                co_return r.objects();
              })
      .action(
          "getSchemaVersion",
          [](auto& c) { return count_rows(c, "SELECT max(version) FROM _rivetkit_migrations"); })
      .action("getColumns",
              [](auto& c) -> rivetkit::Task<std::vector<std::string>> {
                auto op = c.db().execute("PRAGMA table_info(items)");
                auto r = co_await std::move(op);
                std::vector<std::string> out;
                for (auto& row : r.objects()) {
                  for (const auto& m : row.as_object()) {
                    if (m.key == "name") {
                      out.push_back(m.value.as_string());
                    }
                  }
                }
                co_return out;
              })
      .action("triggerSleep", [](auto& c) { c.sleep(); });
}

// scheduled-db.ts: a scheduled action that writes to the database and the state.
struct ScheduledDbState {
  std::int64_t scheduledCount = 0;
};
RIVETKIT_FIELDS(ScheduledDbState, scheduledCount)

rivetkit::ActorDefinition scheduled_db() {
  return rivetkit::actor<ScheduledDbState>("scheduledDb")
      .database({{1,
                  "CREATE TABLE IF NOT EXISTS scheduled_log (id INTEGER PRIMARY KEY "
                  "AUTOINCREMENT, action TEXT NOT NULL, created_at INTEGER NOT NULL)"}})
      .action("scheduleDbWrite",
              [](auto& c, double delay_ms) {
                c.schedule().after(std::chrono::milliseconds(static_cast<std::int64_t>(delay_ms)),
                                   "onScheduledDbWrite");
              })
      .action("onScheduledDbWrite",
              [](auto& c) -> rivetkit::Task<void> {
                c.state().scheduledCount += 1;
                auto op = c.db().execute(
                    "INSERT INTO scheduled_log (action, created_at) VALUES ('scheduled', ?)",
                    now_ms());
                co_await std::move(op);
              })
      .action("getLogCount",
              [](auto& c) { return count_rows(c, "SELECT COUNT(*) as count FROM scheduled_log"); })
      .action("getScheduledCount", [](auto& c) { return c.read_state().scheduledCount; });
}

// The teardown hooks' observations, per actor id, in process memory (as the suite keeps them).
std::mutex g_observations_mutex;
std::map<std::string, std::int64_t> g_on_sleep;
std::map<std::string, std::int64_t> g_on_destroy;

void observe(std::map<std::string, std::int64_t>& map, const std::string& id, std::int64_t n) {
  std::lock_guard lock(g_observations_mutex);
  map[id] = n;
}

std::int64_t observed(std::map<std::string, std::int64_t>& map, const std::string& id) {
  std::lock_guard lock(g_observations_mutex);
  auto it = map.find(id);
  return it == map.end() ? -1 : it->second;
}

const std::vector<rivetkit::Migration> kInitOrderSchema{
    {1,
     "CREATE TABLE IF NOT EXISTS init_order_items (id INTEGER PRIMARY KEY AUTOINCREMENT, name "
     "TEXT NOT NULL)"}};
constexpr const char* kCountItems = "SELECT COUNT(*) as count FROM init_order_items";

struct InitialCount {
  std::int64_t count = -1;
};
RIVETKIT_FIELDS(InitialCount, count)

struct InitialCountState {
  std::int64_t initialCount = -1;
};
RIVETKIT_FIELDS(InitialCountState, initialCount)

rivetkit::ActorDefinition init_order_create_state() {
  return rivetkit::actor<InitialCount>("dbInitOrderCreateStateActor")
      .database(kInitOrderSchema)
      .options(db_options(100))
      .create_state([](auto& c) -> rivetkit::Task<InitialCount> {
        auto op = count_rows(c, kCountItems);
        co_return InitialCount{co_await std::move(op)};
      })
      .action("getInitialCount", [](auto& c) { return c.read_state().count; });
}

rivetkit::ActorDefinition init_order_on_create() {
  return rivetkit::actor<InitialCountState>("dbInitOrderOnCreateActor")
      .database(kInitOrderSchema)
      .options(db_options(100))
      .on_create([](auto& c) -> rivetkit::Task<void> {
        auto op = count_rows(c, kCountItems);
        c.state().initialCount = co_await std::move(op);
      })
      .action("getInitialCount", [](auto& c) { return c.read_state().initialCount; });
}

using InitVarsTypes = rivetkit::ActorTypes<rivetkit::Value, rivetkit::Value, InitialCountState>;

rivetkit::ActorDefinition init_order_create_vars() {
  return rivetkit::actor<InitVarsTypes>("dbInitOrderCreateVarsActor")
      .database(kInitOrderSchema)
      .options(db_options(100))
      .create_vars([](auto& c) -> rivetkit::Task<InitialCountState> {
        auto op = count_rows(c, kCountItems);
        co_return InitialCountState{co_await std::move(op)};
      })
      .action("getInitialCount", [](auto& c) { return c.vars().initialCount; });
}

rivetkit::ActorDefinition init_order_on_wake() {
  return rivetkit::actor("dbInitOrderOnWakeActor")
      .database(kInitOrderSchema)
      .options(db_options(100))
      .on_wake([](auto& c) -> rivetkit::Task<void> {
        auto op = c.db().execute("INSERT INTO init_order_items (name) VALUES (?)", "wake-event");
        co_await std::move(op);
      })
      .action("getWakeCount",
              [](auto& c) {
                return count_rows(
                    c, "SELECT COUNT(*) as count FROM init_order_items WHERE name = 'wake-event'");
              })
      .action("triggerSleep", [](auto& c) { c.sleep(); });
}

rivetkit::ActorDefinition init_order_on_sleep() {
  return rivetkit::actor("dbInitOrderOnSleepActor")
      .database(kInitOrderSchema)
      .options(db_options(100))
      .on_sleep([](auto& c) -> rivetkit::Task<void> {
        auto count = count_rows(c, kCountItems);
        observe(g_on_sleep, c.actor_id(), co_await std::move(count));
        auto op = c.db().execute("INSERT INTO init_order_items (name) VALUES (?)", "sleep-event");
        co_await std::move(op);
      })
      .action("getActorId", [](auto& c) { return c.actor_id(); })
      .action("insert",
              [](auto& c, std::string name) -> rivetkit::Task<void> {
                auto op = c.db().execute("INSERT INTO init_order_items (name) VALUES (?)", name);
                co_await std::move(op);
              })
      .action("getSleepEventCount",
              [](auto& c) {
                return count_rows(
                    c, "SELECT COUNT(*) as count FROM init_order_items WHERE name = 'sleep-event'");
              })
      .action("triggerSleep", [](auto& c) { c.sleep(); });
}

rivetkit::ActorDefinition init_order_on_destroy() {
  return rivetkit::actor("dbInitOrderOnDestroyActor")
      .database(kInitOrderSchema)
      .options(db_options(100))
      .on_destroy([](auto& c) -> rivetkit::Task<void> {
        auto count = count_rows(c, kCountItems);
        observe(g_on_destroy, c.actor_id(), co_await std::move(count));
      })
      .action("getActorId", [](auto& c) { return c.actor_id(); })
      .action("insert",
              [](auto& c, std::string name) -> rivetkit::Task<void> {
                auto op = c.db().execute("INSERT INTO init_order_items (name) VALUES (?)", name);
                co_await std::move(op);
              })
      .action("triggerDestroy", [](auto& c) { c.destroy(); });
}

rivetkit::ActorDefinition init_order_observer() {
  return rivetkit::actor("dbInitOrderObserver")
      .action("getOnSleepCount", [](auto&, std::string id) { return observed(g_on_sleep, id); })
      .action("getOnDestroyCount",
              [](auto&, std::string id) { return observed(g_on_destroy, id); });
}

// The step's attempts in this process (the TS fixture's module variable): the first one fails
// after creating a table, which the rollback must undo.
std::atomic<int> g_rollback_migration_attempts{0};

void rollback_probe_step(rivetkit::MigrationDb& db) {
  auto existing = db.execute(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'migration_probe'");
  db.execute("CREATE TABLE migration_probe(value INTEGER)");
  if (++g_rollback_migration_attempts == 1) {
    throw std::runtime_error("intentional drizzle migration failure");
  }
  db.execute("CREATE TABLE migration_audit(rolled_back INTEGER NOT NULL)");
  db.execute("INSERT INTO migration_audit(rolled_back) VALUES (?)", existing.rows.empty() ? 1 : 0);
}

rivetkit::ActorDefinition db_migration_rollback() {
  return rivetkit::actor("dbActorDrizzleMigrationRollback")
      .database({{1, rollback_probe_step}})
      .action("migrationRolledBack", [](auto& c) -> rivetkit::Task<bool> {
        auto op = c.db().execute("SELECT rolled_back FROM migration_audit");
        auto r = co_await std::move(op);
        co_return !r.rows.empty() && r.rows[0].at(0).as_int() == 1;
      });
}

}  // namespace

void add_db_catalogue_actors(rivetkit::Registry& registry) {
  registry.add(db_lifecycle());
  registry.add(scheduled_db());
  registry.add(db_pragma_migration());
  registry.add(init_order_create_state());
  registry.add(init_order_on_create());
  registry.add(init_order_create_vars());
  registry.add(init_order_on_wake());
  registry.add(init_order_on_sleep());
  registry.add(init_order_on_destroy());
  registry.add(init_order_observer());
  registry.add(db_migration_rollback());
}

}  // namespace fixture
