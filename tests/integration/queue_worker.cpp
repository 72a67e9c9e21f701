// queueWorker: a queue with redelivery rules (rivetkit::QueueDelivery, beyond RivetKit) for
// tests/js/integration/queue-delivery.test.mjs.
//   jobs    a visibility timeout of 60 s (only a restart shows a taken message again before the
//           test ends) and 3 deliveries at most;
//   slow    a visibility timeout of 300 ms;
//   poison  2 deliveries at most, consumed by the `run` loop: a message "crash" ends the process
//           right after its receive (a handler that crashes), anything else is completed;
//   ledger  exactly once (5 deliveries at most, so each crash counts): applyOnce adds a
//           message's amount to the state and a row of the actor's database, waiting between
//           steps, and can end the process at any step of its first delivery.

#include "queue_worker.hpp"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace fixture {
namespace {

using namespace std::chrono_literals;

struct WorkerState {
  std::int64_t applied = 0;
  bool holding = false;  // holdUntilGo has its message
  bool go = false;
};
RIVETKIT_FIELDS(WorkerState, applied, holding, go)

rivetkit::Value taken_value(const rivetkit::QueueMessage& m) {
  return rivetkit::Value::object({{"id", static_cast<std::int64_t>(m.id())},
                                  {"name", m.name()},
                                  {"body", m.body()},
                                  {"deliveries", static_cast<std::int64_t>(m.deliveries())}});
}

rivetkit::QueueReceive completable(std::string name) {
  rivetkit::QueueReceive r;
  r.names = {std::move(name)};
  r.completable = true;
  return r;
}

}  // namespace

rivetkit::ActorDefinition queue_worker() {
  rivetkit::QueueDelivery jobs;
  jobs.visibility_timeout = 60s;
  jobs.max_deliveries = 3;
  rivetkit::QueueDelivery slow;
  slow.visibility_timeout = 300ms;
  rivetkit::QueueDelivery poison;
  poison.max_deliveries = 2;
  rivetkit::QueueDelivery ledger;
  ledger.exactly_once = true;
  ledger.max_deliveries = 5;
  return rivetkit::actor<WorkerState>("queueWorker")
      .queue("jobs", jobs)
      .queue("slow", slow)
      .queue("poison", poison)
      .queue("ledger", ledger)
      .queue("late")
      .database({{1, "CREATE TABLE ledger (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL)"}})
      .run([](auto& c) -> rivetkit::Task<void> {
        while (true) {
          auto op = c.queue().next(completable("poison"));
          auto m = co_await std::move(op);
          if (!m) {
            continue;
          }
          if (m->body() == rivetkit::Value("crash")) {
            std::_Exit(3);  // the handler crashes the process after the receive
          }
          c.state().applied += 1;
          auto done = m->complete();
          co_await std::move(done);
        }
      })
      // A completable receive that is not completed: the message stays, hidden for its queue's
      // visibility timeout. {id, name, body, deliveries} or null.
      .action("take",
              [](auto& c, std::string name,
                 std::optional<std::int64_t> wait_ms) -> rivetkit::Task<rivetkit::Value> {
                auto r = completable(std::move(name));
                std::optional<rivetkit::QueueMessage> m;
                if (wait_ms) {
                  r.timeout = std::chrono::milliseconds(*wait_ms);
                  auto op = c.queue().next(std::move(r));
                  m = co_await std::move(op);
                } else {
                  auto op = c.queue().try_next(std::move(r));
                  m = co_await std::move(op);
                }
                co_return m ? taken_value(*m) : rivetkit::Value(nullptr);
              })
      .action("takeAndComplete",
              [](auto& c, std::string name,
                 rivetkit::Value response) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.queue().try_next(completable(std::move(name)));
                auto m = co_await std::move(op);
                if (!m) {
                  co_return rivetkit::Value(nullptr);
                }
                auto done = m->complete(std::move(response));
                co_await std::move(done);
                co_return taken_value(*m);
              })
      // Takes a message, waits until go() and then completes it: {deliveries, result} where
      // result is "completed" or the error's group.code.
      .action(
          "holdUntilGo",
          [](auto& c, std::string name) -> rivetkit::Task<rivetkit::Value> {
            c.state().go = false;
            auto op = c.queue().try_next(completable(std::move(name)));
            auto m = co_await std::move(op);
            if (!m) {
              co_return rivetkit::Value(nullptr);
            }
            c.state().holding = true;
            while (!c.state().go) {
              auto wait_op = c.wait(10ms);
              co_await std::move(wait_op);
            }
            std::string result = "completed";
            try {
              auto done = m->complete();
              co_await std::move(done);
            } catch (const rivetkit::ActorError& e) {
              result = e.error().group + "." + e.error().code;
            }
            co_return rivetkit::Value::object(
                {{"deliveries", static_cast<std::int64_t>(m->deliveries())}, {"result", result}});
          })
      // One ledger message, handled in steps that each end a turn (the database runs off the
      // actor's thread; a wait): `crash_at` "start" (after the receive), "mid" (after the state
      // and the row changed), "end" (right after complete()) or "after" (once the completion is
      // durable) ends the process on the message's first delivery. {deliveries, applied} or null.
      .action("applyOnce",
              [](auto& c, std::string crash_at) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.queue().try_next(completable("ledger"));
                auto m = co_await std::move(op);
                if (!m) {
                  co_return rivetkit::Value(nullptr);
                }
                const bool first = m->deliveries() == 1;
                auto crash = [&](const char* step) {
                  if (first && crash_at == step) {
                    std::_Exit(3);
                  }
                };
                crash("start");
                const auto amount = m->body().find("amount")->as_int();
                c.state().applied += amount;
                auto insert_op = c.db().execute("INSERT INTO ledger (amount) VALUES (?)", amount);
                co_await std::move(insert_op);
                auto wait_op = c.wait(20ms);
                co_await std::move(wait_op);
                crash("mid");
                auto done = m->complete();
                co_await std::move(done);
                crash("end");
                if (first && crash_at == "after") {
                  auto save_op = c.save_state();  // the completion and its effects are durable
                  co_await std::move(save_op);
                  crash("after");
                }
                co_return rivetkit::Value::object(
                    {{"deliveries", static_cast<std::int64_t>(m->deliveries())},
                     {"applied", c.state().applied}});
              })
      .action("ledgerState",
              [](auto& c) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.db().execute("SELECT count(*), coalesce(sum(amount), 0) FROM ledger");
                auto rows = co_await std::move(op);
                co_return rivetkit::Value::object(
                    {{"applied", c.state().applied},
                     {"rows", rows.rows.at(0).at(0)},
                     {"sum", rows.rows.at(0).at(1)},
                     {"queued", static_cast<std::int64_t>(c.queue().size())}});
              })
      // RivetKit's waitForNamesAvailable, then waitForNames: the body, or queue.timed_out.
      .action("waitForNames",
              [](auto& c, std::vector<std::string> names,
                 std::int64_t timeout_ms) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.timeout = std::chrono::milliseconds(timeout_ms);
                auto available_op = c.queue().wait_for_names_available(names, r);
                co_await std::move(available_op);
                const auto queued = c.queue().size();
                auto op = c.queue().wait_for_names(std::move(names), r);
                auto m = co_await std::move(op);
                co_return rivetkit::Value::object(
                    {{"queued", static_cast<std::int64_t>(queued)}, {"body", m.body()}});
              })
      .action("go",
              [](auto& c) {
                c.state().go = true;
                return true;
              })
      .action("applied", [](auto& c) { return c.state().applied; })
      .action("holding", [](auto& c) { return c.state().holding; })
      .action("size", [](auto& c) { return static_cast<std::int64_t>(c.queue().size()); })
      .action("deadLetters",
              [](auto& c) {
                rivetkit::Array out;
                for (const auto& d : c.queue().dead_letters()) {
                  out.push_back(rivetkit::Value::object(
                      {{"id", static_cast<std::int64_t>(d.id)},
                       {"name", d.name},
                       {"body", d.body},
                       {"deliveries", static_cast<std::int64_t>(d.deliveries)}}));
                }
                return rivetkit::Value(std::move(out));
              })
      .action("replay",
              [](auto& c, std::int64_t id) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.queue().replay_dead_letter(static_cast<std::uint64_t>(id));
                auto replayed = co_await std::move(op);
                co_return replayed ? rivetkit::Value(static_cast<std::int64_t>(*replayed))
                                   : rivetkit::Value(nullptr);
              })
      .action("drop", [](auto& c, std::int64_t id) -> rivetkit::Task<bool> {
        auto op = c.queue().drop_dead_letter(static_cast<std::uint64_t>(id));
        co_return co_await std::move(op);
      });
}

}  // namespace fixture
