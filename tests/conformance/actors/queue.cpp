// queue.ts's actors (c.queue(), include/rivetkit/queue.hpp): queueActor (its AbortSignals are
// rivetkit::ReceiveCancel), queueLimitedActor, the manyQueue family (a child draining 32 queues in
// its run loop, created by a parent's action or by a parent's run loop); and run.ts's
// runWithQueueConsumer.

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

// The suite's `setTimeout(() => c.destroy(), 10)`.
rivetkit::Task<void> destroy_in_10ms(rivetkit::detail::ActorApi* api) {
  auto wait_op = api->wait_for(10ms);
  co_await std::move(wait_op);
  api->destroy();
}

// A 10 s wait on queue `abort` with `cancel`: the {group, code} it ends with, or {ok: false}.
template <class Ctx>
rivetkit::Task<rivetkit::Value> abort_of_wait(Ctx c,
                                              std::optional<rivetkit::ReceiveCancel> cancel) {
  rivetkit::QueueReceive r;
  r.names = {"abort"};
  r.timeout = 10'000ms;
  r.cancel = std::move(cancel);
  try {
    auto op = c.queue().next(std::move(r));
    co_await std::move(op);
  } catch (const rivetkit::ActorError& e) {
    co_return error_code(e);
  }
  co_return rivetkit::Value::object({{"ok", false}});
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
                c.wait_until(destroy_in_10ms(rivetkit::detail::Access::api(c)));
                rivetkit::QueueReceive r;
                r.names = {"abort"};
                r.timeout = 10'000ms;
                auto op = c.queue().next(std::move(r));
                co_await std::move(op);
                co_return true;
              })
      // A receive given a cancel that already fired: actor.aborted at once.
      .action("waitForSignalAbort",
              [](auto& c) {
                rivetkit::ReceiveCancel cancel;
                cancel.cancel();
                return abort_of_wait(c, cancel);
              })
      // A cancel given but never fired; the actor's destroy ends the wait.
      .action("waitForActorAbortWithSignal",
              [](auto& c) {
                c.wait_until(destroy_in_10ms(rivetkit::detail::Access::api(c)));
                return abort_of_wait(c, rivetkit::ReceiveCancel{});
              })
      // The suite's iterator with an aborted signal: the loop ends with actor.aborted.
      .action("iterWithSignalAbort",
              [](auto& c) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.names = {"abort"};
                r.cancel.emplace();
                r.cancel->cancel();
                try {
                  auto op = c.queue().next(std::move(r));
                  if (co_await std::move(op)) {
                    co_return rivetkit::Value::object({{"ok", false}});
                  }
                  co_return rivetkit::Value::object({{"ok", true}});
                } catch (const rivetkit::ActorError& e) {
                  if (e.error().group == "actor" && e.error().code == "aborted") {
                    co_return rivetkit::Value::object({{"ok", true}});
                  }
                  throw;
                }
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

// ---- the manyQueue family ------------------------------------------------------------------

std::vector<std::string> many_queue_names() {
  std::vector<std::string> names;
  for (int i = 0; i < 32; ++i) {
    names.push_back("cmd." + std::to_string(i));
  }
  return names;
}

struct ManyChildState {
  std::string label;
  bool started = false;
  std::vector<std::string> processed;
};
RIVETKIT_FIELDS(ManyChildState, label, started, processed)

rivetkit::ActorDefinition many_queue_child_actor() {
  auto builder = rivetkit::actor<ManyChildState>("manyQueueChildActor");
  for (const auto& name : many_queue_names()) {
    builder.queue(name);
  }
  return builder
      .create_state([](auto&, const rivetkit::Value& label) {
        ManyChildState s;
        s.label = label.is_string() ? label.as_string() : std::string();
        return s;
      })
      .run([](auto& c) -> rivetkit::Task<void> {
        c.state().started = true;
        rivetkit::QueueReceive r;
        r.names = many_queue_names();
        r.completable = true;
        while (true) {
          auto op = c.queue().next(r);
          auto m = co_await std::move(op);
          if (!m) {
            co_return;
          }
          c.state().processed.push_back(m->name());
          const auto* index = m->body().find("index");
          auto done = m->complete(rivetkit::Value::object(
              {{"ok", true}, {"index", index != nullptr ? *index : rivetkit::Value(nullptr)}}));
          co_await std::move(done);
        }
      })
      .action("ping",
              [](auto& c) {
                return rivetkit::Value::object(
                    {{"label", std::as_const(c).state().label}, {"pong", true}});
              })
      .action("getSnapshot", [](auto& c) { return std::as_const(c).state(); });
}

struct SpawnedState {
  std::vector<std::string> spawned;
};
RIVETKIT_FIELDS(SpawnedState, spawned)

template <class Ctx>
rivetkit::Task<void> spawn_child(Ctx c, std::string key) {
  rivetkit::CreateOptions options;
  options.input = key;
  auto child = c.client().get_or_create("manyQueueChildActor", {key}, std::move(options));
  auto op = child.resolve();
  co_await std::move(op);
  c.state().spawned.push_back(std::move(key));
}

rivetkit::ActorDefinition many_queue_action_parent_actor() {
  return rivetkit::actor<SpawnedState>("manyQueueActionParentActor")
      .action("spawnChild",
              [](auto& c, std::string key) -> rivetkit::Task<rivetkit::Value> {
                auto op = spawn_child(c, key);
                co_await std::move(op);
                co_return rivetkit::Value::object({{"key", key}});
              })
      .action("getSpawned", [](auto& c) { return std::as_const(c).state().spawned; });
}

rivetkit::ActorDefinition many_queue_run_parent_actor() {
  return rivetkit::actor<SpawnedState>("manyQueueRunParentActor")
      .queue("spawn")
      .action("queueSpawn",
              [](auto& c, std::string key) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.queue().send_and_wait("spawn", rivetkit::Value::object({{"key", key}}),
                                                  10'000ms);
                co_await std::move(op);
                co_return rivetkit::Value::object({{"queued", true}});
              })
      .action("getSpawned", [](auto& c) { return std::as_const(c).state().spawned; })
      .run([](auto& c) -> rivetkit::Task<void> {
        rivetkit::QueueReceive r;
        r.names = {"spawn"};
        r.completable = true;
        while (true) {
          auto op = c.queue().next(r);
          auto m = co_await std::move(op);
          if (!m) {
            co_return;
          }
          const auto* key = m->body().find("key");
          auto spawn_op =
              spawn_child(c, key != nullptr && key->is_string() ? key->as_string() : std::string());
          co_await std::move(spawn_op);
          auto done = m->complete(rivetkit::Value::object({{"ok", true}}));
          co_await std::move(done);
        }
      });
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
  registry.add(many_queue_child_actor());
  registry.add(many_queue_action_parent_actor());
  registry.add(many_queue_run_parent_actor());
  registry.add(run_with_queue_consumer());
}

}  // namespace fixture
