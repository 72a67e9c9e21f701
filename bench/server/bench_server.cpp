// Fixture actors of the benchmark suite (bench/run.mjs), the same as bench/official/server.ts:
//   counter        state {count}; increment(by) -> count and broadcasts `newCount`; getCount();
//                  stamp(t) broadcasts `stamp` (fan-out); goToSleep() (wake test); startId(): a
//                  number that changes every time the actor starts (ephemeral vars, so waking
//                  writes nothing), which shows that a measured call really woke the actor
//   counterUnheld  the same counter with durable_replies = false (replies not held for commit)
//   echo           echo(x) -> x
//   caller         callEcho(key, n): n sequential echo(i) calls to echo[key] through c.client(),
//                  each timed here; returns the n durations in ms
//   sql            a SQLite table rows(id INTEGER PRIMARY KEY, v TEXT): insertEach(n, size) runs n
//                  single-row INSERTs (each its own SQLite transaction), insertBatch(n, size) one
//                  transaction of n rows, selectEach(n) n point SELECTs by id; each returns the
//                  milliseconds it took inside the actor; count(); goToSleep()
//   wf             a durable workflow: each message {steps: n} on queue `runs` runs a loop of n
//                  iterations with one step each (count += 1), then completes the message with
//                  {ms}, the time the n steps took inside the actor; count(); goToSleep()
//   wfLong         a workflow of 1,000 steps, then a loop answering each message on queue `go`:
//                  after a wake its 1,000 recorded entries are replayed before it answers;
//                  done() (steps run); goToSleep()
// Runs in local mode, or in engine mode when RIVET_ENDPOINT is set (see the registry).
// Env: BENCH_SLEEP_TIMEOUT_MS (idle sleep timeout of the counters, default 30000).

#include <rivetkit/rivetkit.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace bench {

struct CounterState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(CounterState, count)

struct CounterVars {
  std::int64_t start_id = 0;
};

using CounterTypes = rivetkit::ActorTypes<CounterState, rivetkit::Value, CounterVars>;

std::atomic<std::int64_t> g_starts{0};

std::chrono::milliseconds sleep_timeout() {
  const char* env = std::getenv("BENCH_SLEEP_TIMEOUT_MS");
  return std::chrono::milliseconds(env != nullptr ? std::strtoll(env, nullptr, 10) : 30'000);
}

rivetkit::ActorDefinition counter(const std::string& name, bool durable_replies) {
  rivetkit::ActorOptions options;
  options.sleep_timeout = sleep_timeout();
  options.durable_replies = durable_replies;
  return rivetkit::actor<CounterTypes>(name)
      .options(options)
      .create_vars([](auto&) { return CounterVars{++g_starts}; })
      .action("increment",
              [](auto& c, std::int64_t by) {
                c.state().count += by;
                c.broadcast("newCount", c.state().count);
                return c.state().count;
              })
      .action("getCount", [](auto& c) { return std::as_const(c).state().count; })
      .action("startId", [](auto& c) { return c.vars().start_id; })
      .action("stamp",
              [](auto& c, double t) {
                c.broadcast("stamp", t);
                return t;
              })
      .action("goToSleep", [](auto& c) {
        c.sleep();
        return true;
      });
}

rivetkit::ActorDefinition echo() {
  return rivetkit::actor<>("echo").action("echo", [](auto&, rivetkit::Value x) { return x; });
}

rivetkit::Task<std::vector<double>> call_echo(rivetkit::Client client,
                                              std::string key,
                                              std::int64_t n) {
  auto handle = client.get_or_create("echo", std::vector<std::string>{std::move(key)});
  std::vector<double> took;
  took.reserve(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto op = handle.action("echo", i);
    co_await std::move(op);
    took.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  co_return took;
}

rivetkit::ActorDefinition caller() {
  return rivetkit::actor<>("caller").action("callEcho",
                                            [](auto& c, std::string key, std::int64_t n) {
                                              return call_echo(c.client(), std::move(key), n);
                                            });
}

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// worker: queue `jobs`, consumed by its run loop; each message is taken as completable and
// completed with its body, so a sender that waits gets its body back.
rivetkit::ActorDefinition worker() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = sleep_timeout();
  return rivetkit::actor<>("worker")
      .options(options)
      .queue("jobs")
      .run([](auto& c) -> rivetkit::Task<void> {
        rivetkit::QueueReceive r;
        r.names = {"jobs"};
        r.completable = true;
        while (true) {
          auto op = c.queue().next(r);  // actor.aborted ends the loop at the stop
          auto m = co_await std::move(op);
          if (m) {
            auto done = m->complete(m->body());
            co_await std::move(done);
          }
        }
      })
      .action("ping", [](auto&) { return true; });
}

struct WfState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(WfState, count)
using WfTypes = rivetkit::ActorTypes<WfState>;

struct WfRun {
  std::int64_t steps = 0;
};
RIVETKIT_FIELDS(WfRun, steps)

rivetkit::ActorDefinition wf() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = sleep_timeout();
  return rivetkit::actor<WfTypes>("wf")
      .options(options)
      .queue("runs")
      .workflow([](rivetkit::WorkflowContext<WfTypes>& w) -> rivetkit::Task<void> {
        co_await w.loop("runs", [](auto& lc) -> rivetkit::Task<rivetkit::Loop> {
          rivetkit::QueueNextOptions next;
          next.names = {"runs"};
          next.completable = true;
          auto message = co_await lc.template queue_next<WfRun>("run", next);
          const auto t0 = std::chrono::steady_clock::now();
          const std::int64_t n = message.body.steps;
          using Turn = rivetkit::LoopResult<rivetkit::Empty, std::int64_t>;
          auto steps = lc.loop("steps", std::int64_t{0},
                               [n](auto& sc, std::int64_t& i) -> rivetkit::Task<Turn> {
                                 if (i >= n) {
                                   co_return Turn::done();
                                 }
                                 auto op = sc.step("s", [](auto& c) { c.state().count += 1; });
                                 co_await std::move(op);
                                 co_return Turn::next(i + 1);
                               });
          co_await std::move(steps);
          const double ms =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count();
          auto done = message.complete(rivetkit::Value::object({{"ms", rivetkit::Value(ms)}}));
          co_await std::move(done);
          co_return rivetkit::Loop::next();
        });
      })
      .action("count", [](auto& c) { return c.read_state().count; })
      .action("goToSleep", [](auto& c) {
        c.sleep();
        return true;
      });
}

rivetkit::ActorDefinition wf_long() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = sleep_timeout();
  return rivetkit::actor<WfTypes>("wfLong")
      .options(options)
      .queue("go")
      .workflow([](rivetkit::WorkflowContext<WfTypes>& w) -> rivetkit::Task<void> {
        for (int i = 0; i < 1000; ++i) {
          auto op = w.step("s" + std::to_string(i), [](auto& c) { c.state().count += 1; });
          co_await std::move(op);
        }
        co_await w.loop("serve", [](auto& lc) -> rivetkit::Task<rivetkit::Loop> {
          rivetkit::QueueNextOptions next;
          next.names = {"go"};
          next.completable = true;
          auto message = co_await lc.queue_next("go", next);
          auto done = message.complete(rivetkit::Value(true));
          co_await std::move(done);
          co_return rivetkit::Loop::next();
        });
      })
      .action("done", [](auto& c) { return c.read_state().count; })
      .action("goToSleep", [](auto& c) {
        c.sleep();
        return true;
      });
}

rivetkit::ActorDefinition sql() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = sleep_timeout();
  return rivetkit::actor<>("sql")
      .database({{1, "CREATE TABLE rows (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"}})
      .options(options)
      .action("insertEach",
              [](auto& c, std::int64_t n, std::int64_t size) -> rivetkit::Task<double> {
                const std::string v(static_cast<std::size_t>(size), 'x');
                const auto t0 = std::chrono::steady_clock::now();
                for (std::int64_t i = 0; i < n; ++i) {
                  auto op = c.db().execute("INSERT INTO rows (v) VALUES (?)", v);
                  co_await std::move(op);
                }
                co_return ms_since(t0);
              })
      .action("insertBatch",
              [](auto& c, std::int64_t n, std::int64_t size) -> rivetkit::Task<double> {
                const std::string v(static_cast<std::size_t>(size), 'x');
                const auto t0 = std::chrono::steady_clock::now();
                auto op =
                    c.db().transaction([&](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
                      for (std::int64_t i = 0; i < n; ++i) {
                        auto insert = tx.execute("INSERT INTO rows (v) VALUES (?)", v);
                        co_await std::move(insert);
                      }
                    });
                co_await std::move(op);
                co_return ms_since(t0);
              })
      .action("selectEach",
              [](auto& c, std::int64_t n) -> rivetkit::Task<double> {
                const auto t0 = std::chrono::steady_clock::now();
                for (std::int64_t i = 0; i < n; ++i) {
                  auto op = c.db().execute("SELECT v FROM rows WHERE id = ?", 1 + i % 100);
                  co_await std::move(op);
                }
                co_return ms_since(t0);
              })
      .action("count",
              [](auto& c) -> rivetkit::Task<std::int64_t> {
                auto op = c.db().execute("SELECT count(*) FROM rows");
                auto r = co_await std::move(op);
                co_return r.rows.at(0).at(0).as_int();
              })
      .action("goToSleep", [](auto& c) {
        c.sleep();
        return true;
      });
}

}  // namespace bench

int main(int argc, char** argv) {
  rivetkit::Registry registry;
  registry.add(bench::counter("counter", true));
  registry.add(bench::counter("counterUnheld", false));
  registry.add(bench::echo());
  registry.add(bench::caller());
  registry.add(bench::sql());
  registry.add(bench::worker());
  registry.add(bench::wf());
  registry.add(bench::wf_long());
  return registry.run(argc, argv);
}
