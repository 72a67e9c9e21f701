// queue.ts's actors (c.queue(), include/rivetkit/queue.hpp): queueActor, queueLimitedActor; and
// run.ts's runWithQueueConsumer. Not written: the receives with a caller's own AbortSignal
// (waitForSignalAbort, waitForActorAbortWithSignal, iterWithSignalAbort: the C++ API has no
// caller-side signal yet) and the manyQueue family.

#include "fixture.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fixture {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string> kQueueNames = {"greeting", "self",   "a",       "b",     "c",
                                              "one",      "two",    "missing", "abort", "tasks",
                                              "timeout",  "nowait", "twice"};

rivetkit::Value message_value(const rivetkit::QueueMessage& m) {
  return rivetkit::Value::object({{"name", m.name()}, {"body", m.body()}});
}

rivetkit::Value messages_value(const std::vector<rivetkit::QueueMessage>& list) {
  rivetkit::Array out;
  for (const auto& m : list) {
    out.push_back(message_value(m));
  }
  return out;
}

rivetkit::Value error_code(const rivetkit::ActorError& e) {
  return rivetkit::Value::object({{"group", e.error().group}, {"code", e.error().code}});
}

// The suite's request objects: {names?, count?, timeout?}.
rivetkit::QueueReceive receive_of(const rivetkit::Value& request) {
  rivetkit::QueueReceive r;
  if (const auto* names = request.find("names"); names != nullptr && names->is_array()) {
    for (const auto& n : names->as_array()) {
      r.names.push_back(n.as_string());
    }
  }
  if (const auto* count = request.find("count"); count != nullptr && count->is_number()) {
    r.count = count->is_int() ? static_cast<std::size_t>(count->as_int())
                              : static_cast<std::size_t>(count->as_double());
  }
  if (const auto* timeout = request.find("timeout"); timeout != nullptr && timeout->is_number()) {
    r.timeout = std::chrono::milliseconds(
        timeout->is_int() ? timeout->as_int() : static_cast<std::int64_t>(timeout->as_double()));
  }
  return r;
}

rivetkit::ActorDefinition queue_actor() {
  auto builder = rivetkit::actor("queueActor");
  for (const auto& name : kQueueNames) {
    builder.queue(name);
  }
  return builder
      .action(
          "receiveOne",
          [](auto& c, std::string name, rivetkit::Value opts) -> rivetkit::Task<rivetkit::Value> {
            auto r = receive_of(opts);
            r.names = {std::move(name)};
            auto op = c.queue().next(std::move(r));
            auto m = co_await std::move(op);
            co_return m ? message_value(*m) : rivetkit::Value(nullptr);
          })
      .action("receiveMany",
              [](auto& c, std::vector<std::string> names,
                 rivetkit::Value opts) -> rivetkit::Task<rivetkit::Value> {
                auto r = receive_of(opts);
                r.names = std::move(names);
                auto op = c.queue().next_batch(std::move(r));
                co_return messages_value(co_await std::move(op));
              })
      .action("receiveRequest",
              [](auto& c, rivetkit::Value request) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.queue().next_batch(receive_of(request));
                co_return messages_value(co_await std::move(op));
              })
      .action("tryReceiveMany",
              [](auto& c, rivetkit::Value request) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.queue().try_next_batch(receive_of(request));
                co_return messages_value(co_await std::move(op));
              })
      // The suite's iterators return the first message: a receive loop that returns at once.
      .action("receiveWithIterator",
              [](auto& c, std::string name) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.names = {std::move(name)};
                auto op = c.queue().next(std::move(r));
                auto m = co_await std::move(op);
                co_return m ? message_value(*m) : rivetkit::Value(nullptr);
              })
      .action("receiveWithAsyncIterator",
              [](auto& c) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.queue().next();
                auto m = co_await std::move(op);
                co_return m ? message_value(*m) : rivetkit::Value(nullptr);
              })
      .action("sendToSelf",
              [](auto& c, std::string name, rivetkit::Value body) -> rivetkit::Task<bool> {
                auto handle = c.client().get_for_id("queueActor", c.actor_id());
                auto op = handle.send(std::move(name), body);
                co_await std::move(op);
                co_return true;
              })
      .action("waitForAbort",
              [](auto& c) -> rivetkit::Task<bool> {
                // Destroyed 10 ms into the wait: the receive ends with actor.aborted.
                auto later = [](rivetkit::detail::ActorApi* api) -> rivetkit::Task<void> {
                  auto wait_op = api->wait_for(10ms);
                  co_await std::move(wait_op);
                  api->destroy();
                };
                c.wait_until(later(c.api()));
                rivetkit::QueueReceive r;
                r.names = {"abort"};
                r.timeout = 10'000ms;
                auto op = c.queue().next(std::move(r));
                co_await std::move(op);
                co_return true;
              })
      .action("receiveAndComplete",
              [](auto& c, std::string name) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.names = {std::move(name)};
                r.completable = true;
                auto op = c.queue().next(std::move(r));
                auto m = co_await std::move(op);
                if (!m) {
                  co_return nullptr;
                }
                auto done = m->complete(rivetkit::Value::object({{"echo", m->body()}}));
                co_await std::move(done);
                co_return message_value(*m);
              })
      .action("receiveWithoutComplete",
              [](auto& c, std::string name) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.names = {std::move(name)};
                r.completable = true;
                auto op = c.queue().next(std::move(r));
                auto m = co_await std::move(op);
                co_return m ? message_value(*m) : rivetkit::Value(nullptr);
              })
      .action("receiveManualThenNextWithoutComplete",
              [](auto& c, std::string name) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.names = {name};
                r.completable = true;
                auto op = c.queue().next(std::move(r));
                auto m = co_await std::move(op);
                if (!m) {
                  co_return rivetkit::Value::object({{"ok", false}, {"reason", "no_message"}});
                }
                rivetkit::QueueReceive again;
                again.names = {name};
                again.timeout = 0ms;
                std::optional<rivetkit::Value> refused;
                try {
                  auto next_op = c.queue().next(std::move(again));
                  co_await std::move(next_op);
                } catch (const rivetkit::ActorError& e) {
                  refused = error_code(e);
                }
                c.destroy();
                co_return refused
                    ? *refused
                    : rivetkit::Value::object({{"ok", false}, {"reason", "next_succeeded"}});
              })
      .action("receiveAndCompleteTwice",
              [](auto& c, std::string name) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.names = {std::move(name)};
                r.completable = true;
                auto op = c.queue().next(std::move(r));
                auto m = co_await std::move(op);
                if (!m) {
                  co_return nullptr;
                }
                auto first = m->complete(rivetkit::Value::object({{"ok", true}}));
                co_await std::move(first);
                std::optional<rivetkit::Value> refused;
                try {
                  auto second = m->complete(rivetkit::Value::object({{"ok", true}}));
                  co_await std::move(second);
                } catch (const rivetkit::ActorError& e) {
                  refused = error_code(e);
                }
                co_return refused ? *refused : rivetkit::Value::object({{"ok", false}});
              })
      .action("receiveWithoutCompleteMethod",
              [](auto& c, std::string name) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.names = {std::move(name)};
                r.completable = true;
                auto op = c.queue().next(std::move(r));
                auto m = co_await std::move(op);
                co_return rivetkit::Value::object({{"hasComplete", m && m->completable()}});
              });
}

rivetkit::ActorDefinition queue_limited_actor() {
  rivetkit::ActorOptions options;
  options.max_queue_size = 1;
  options.max_queue_message_size = 64;
  return rivetkit::actor("queueLimitedActor").queue("message").queue("oversize").options(options);
}

struct ConsumerState {
  rivetkit::Array messagesReceived;
  bool runStarted = false;
  std::int64_t wakeCount = 0;
};
RIVETKIT_FIELDS(ConsumerState, messagesReceived, runStarted, wakeCount)

rivetkit::ActorDefinition run_with_queue_consumer() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = 1000ms;  // the suite's RUN_SLEEP_TIMEOUT
  return rivetkit::actor<ConsumerState>("runWithQueueConsumer")
      .queue("messages")
      .options(options)
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .run([](auto& c) -> rivetkit::Task<void> {
        c.state().runStarted = true;
        while (true) {
          rivetkit::QueueReceive r;
          r.names = {"messages"};
          auto op = c.queue().next(std::move(r));
          std::optional<rivetkit::QueueMessage> m;
          try {
            m = co_await std::move(op);
          } catch (const rivetkit::ActorError&) {
            co_return;  // the actor is stopping
          }
          if (!m) {
            co_return;
          }
          c.state().messagesReceived.push_back(message_value(*m));
        }
      })
      .action("sendMessage",
              [](auto& c, rivetkit::Value body) -> rivetkit::Task<bool> {
                auto op = c.queue().send("messages", body);
                co_await std::move(op);
                co_return true;
              })
      .action("getState", [](auto& c) { return std::as_const(c).state(); });
}

}  // namespace

void add_queue_actors(rivetkit::Registry& registry) {
  registry.add(queue_actor());
  registry.add(queue_limited_actor());
  registry.add(run_with_queue_consumer());
}

}  // namespace fixture
