// queueWorker: a queue with redelivery rules (rivetkit::QueueDelivery, beyond RivetKit) for
// tests/js/integration/queue-delivery.test.mjs.
//   jobs    a visibility timeout of 60 s (only a restart shows a taken message again before the
//           test ends) and 3 deliveries at most;
//   slow    a visibility timeout of 300 ms;
//   poison  2 deliveries at most, consumed by the `run` loop: a message "crash" ends the process
//           right after its receive (a handler that crashes), anything else is completed.

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
  return rivetkit::actor<WorkerState>("queueWorker")
      .queue("jobs", jobs)
      .queue("slow", slow)
      .queue("poison", poison)
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
