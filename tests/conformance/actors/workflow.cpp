// workflow.ts: actors whose run handler is a durable workflow (rivetkit/workflow.hpp): steps
// replayed across sleeps, loops, durable sleeps, retries and the onError hook, completion,
// failure, a step that destroys the actor, step-only access to the database and the client,
// queue waits (completing wait-sends), nested loops, joins and races, try_step and try_block.
//
// (g++ 12: a lambda capturing objects with destructors is bound to a variable before the
// co_await that takes it.)
//
// Every actor of the catalogue's workflow.ts, and workflowTimerActor and
// workflowExactlyOnceQueueActor and workflowSagaActor (rivetkit-cpp's own).

#include "fixture.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fixture {
namespace {

using namespace std::chrono_literals;
using rivetkit::Loop;
using rivetkit::StepOptions;
using rivetkit::Task;

constexpr const char* kGuardKey = "__rivet_actor_workflow_guard_triggered";

rivetkit::ActorOptions sleep_after(std::chrono::milliseconds timeout) {
  rivetkit::ActorOptions options;
  options.sleep_timeout = timeout;
  return options;
}

// ---- workflowCounterActor -----------------------------------------------------------------------

struct CounterState {
  std::int64_t runCount = 0;
  bool guardTriggered = false;
  std::vector<std::int64_t> history;
};
RIVETKIT_FIELDS(CounterState, runCount, guardTriggered, history)
using CounterTypes = rivetkit::ActorTypes<CounterState>;

Task<CounterState> counter_state(rivetkit::Context<CounterTypes> c) {
  auto flag = c.kv().get(kGuardKey);
  if (auto v = co_await std::move(flag); v && *v == "true") {
    c.state().guardTriggered = true;
  }
  co_return c.read_state();
}

rivetkit::ActorDefinition workflow_counter_actor() {
  return rivetkit::actor<CounterTypes>("workflowCounterActor")
      .options(sleep_after(50ms))
      .workflow([](rivetkit::WorkflowContext<CounterTypes>& wf) -> Task<void> {
        // A step's context kept past its step: using it must throw (and raise RivetKit's flag).
        // (Captured by pointer: g++ 12 mishandles lambdas with non-trivial destructors created
        // inside a co_await expression.)
        std::optional<rivetkit::StepContext<CounterTypes>> leaked;
        auto* kept = &leaked;
        co_await wf.loop("counter", [kept](auto& lc) -> Task<Loop> {
          co_await lc.step("increment", [kept](auto& c) {
            c.state().runCount += 1;
            c.state().history.push_back(c.state().runCount);
            kept->emplace(c);
          });
          if (*kept) {
            try {
              (void)(*kept)->state();
            } catch (const rivetkit::ActorError&) {
            }
          }
          co_await lc.sleep("idle", 25ms);
          co_return Loop::next();
        });
      })
      .action("getState", [](auto& c) { return counter_state(c); });
}

// ---- workflowSleepActor -------------------------------------------------------------------------

struct SleepState {
  std::int64_t ticks = 0;
};
RIVETKIT_FIELDS(SleepState, ticks)

rivetkit::ActorDefinition workflow_sleep_actor() {
  using Types = rivetkit::ActorTypes<SleepState>;
  return rivetkit::actor<Types>("workflowSleepActor")
      .options(sleep_after(50ms))
      .workflow([](rivetkit::WorkflowContext<Types>& wf) -> Task<void> {
        co_await wf.loop("sleep", [](auto& lc) -> Task<Loop> {
          co_await lc.step("tick", [](auto& c) { c.state().ticks += 1; });
          co_await lc.sleep("delay", 40ms);
          co_return Loop::next();
        });
      })
      .action("getState", [](auto& c) { return c.read_state(); });
}

// ---- workflowCompleteActor / workflowFailedStepActor ----------------------------------------

struct CompleteState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t runCount = 0;
};
RIVETKIT_FIELDS(CompleteState, startCount, sleepCount, runCount)

rivetkit::ActorDefinition workflow_complete_actor() {
  using Types = rivetkit::ActorTypes<CompleteState>;
  return rivetkit::actor<Types>("workflowCompleteActor")
      .options(sleep_after(50ms))
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .workflow([](rivetkit::WorkflowContext<Types>& wf) -> Task<void> {
        co_await wf.step("complete", [](auto& c) { c.state().runCount += 1; });
      })
      .action("getState", [](auto& c) { return c.read_state(); });
}

struct FailedStepState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::vector<std::string> timeline;
  std::int64_t runCount = 0;
};
RIVETKIT_FIELDS(FailedStepState, startCount, sleepCount, timeline, runCount)

rivetkit::ActorDefinition workflow_failed_step_actor() {
  using Types = rivetkit::ActorTypes<FailedStepState>;
  return rivetkit::actor<Types>("workflowFailedStepActor")
      .options(sleep_after(50ms))
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .workflow([](rivetkit::WorkflowContext<Types>& wf) -> Task<void> {
        co_await wf.step("prepare", [](auto& c) { c.state().timeline.push_back("prepare"); });
        co_await wf.step(
            "fail",
            [](auto& c) {
              c.state().runCount += 1;
              c.state().timeline.push_back("fail");
              throw std::runtime_error("workflow step failed");
            },
            StepOptions{2});
      })
      .action("getState", [](auto& c) { return c.read_state(); });
}

// ---- workflowDestroyActor -----------------------------------------------------------------------

rivetkit::ActorDefinition workflow_destroy_actor() {
  return rivetkit::actor("workflowDestroyActor")
      .on_destroy([](auto& c) {
        return tell(c.client(), "destroyObserver", {"observer"}, "notifyDestroyed",
                    rivetkit::Value(joined_key(c.key())));
      })
      .workflow([](auto& wf) -> Task<void> {
        co_await wf.step("destroy", [](auto& c) { c.destroy(); });
      });
}

// ---- workflowErrorHookActor / workflowErrorHookSleepActor ------------------------------------

struct ErrorHookState {
  std::int64_t attempts = 0;
  std::vector<rivetkit::Value> events;
};
RIVETKIT_FIELDS(ErrorHookState, attempts, events)

struct ErrorHookSleepState {
  std::int64_t attempts = 0;
  std::int64_t wakeCount = 0;
  std::int64_t sleepCount = 0;
  std::vector<rivetkit::Value> events;
};
RIVETKIT_FIELDS(ErrorHookSleepState, attempts, wakeCount, sleepCount, events)

/// The flaky step: its first attempt fails; then the workflow idles for a minute.
template <class Types>
Task<void> flaky_then_idle(rivetkit::WorkflowContext<Types>& wf) {
  co_await wf.step(
      "flaky",
      [](auto& c) {
        c.state().attempts += 1;
        if (c.state().attempts == 1) {
          throw std::runtime_error("workflow hook failed");
        }
      },
      StepOptions{2, 1ms, 1ms});
  co_await wf.sleep("idle", 60s);
}

rivetkit::ActorDefinition workflow_error_hook_actor() {
  using Types = rivetkit::ActorTypes<ErrorHookState>;
  return rivetkit::actor<Types>("workflowErrorHookActor")
      .workflow([](rivetkit::WorkflowContext<Types>& wf) { return flaky_then_idle(wf); },
                [](auto& c, const rivetkit::Value& event) { c.state().events.push_back(event); })
      .action("getErrorState", [](auto& c) { return c.read_state(); });
}

rivetkit::ActorDefinition workflow_error_hook_sleep_actor() {
  using Types = rivetkit::ActorTypes<ErrorHookSleepState>;
  return rivetkit::actor<Types>("workflowErrorHookSleepActor")
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .workflow([](rivetkit::WorkflowContext<Types>& wf) { return flaky_then_idle(wf); },
                [](auto& c, const rivetkit::Value& event) { c.state().events.push_back(event); })
      .action("getErrorState", [](auto& c) { return c.read_state(); })
      .action("triggerSleep", [](auto& c) { c.sleep(); });
}

// ---- workflowReplayActor / workflowRunningStepActor (the inspector's) ------------------------

struct TimelineState {
  std::vector<std::string> timeline;
};
RIVETKIT_FIELDS(TimelineState, timeline)

rivetkit::ActorDefinition workflow_replay_actor() {
  using Types = rivetkit::ActorTypes<TimelineState>;
  return rivetkit::actor<Types>("workflowReplayActor")
      .options(sleep_after(50ms))
      .workflow([](rivetkit::WorkflowContext<Types>& wf) -> Task<void> {
        co_await wf.step("one", [](auto& c) { c.state().timeline.push_back("one"); });
        co_await wf.step("two", [](auto& c) { c.state().timeline.push_back("two"); });
      })
      .action("getTimeline", [](auto& c) { return c.read_state().timeline; });
}

struct RunningStepState {
  std::optional<std::int64_t> finishedAt;
};
RIVETKIT_FIELDS(RunningStepState, finishedAt)

/// Actors whose "block" step may end (release() was called), by id; in memory, as RivetKit's.
std::set<std::string>& released_steps() {
  static std::set<std::string> released;
  return released;
}

template <class C>
Task<void> block_until_released(C& c) {
  const auto id = c.actor_id();
  while (released_steps().count(id) == 0) {
    co_await c.wait(20ms);
  }
  released_steps().erase(id);
}

rivetkit::ActorDefinition workflow_running_step_actor() {
  using Types = rivetkit::ActorTypes<RunningStepState>;
  return rivetkit::actor<Types>("workflowRunningStepActor")
      .options(sleep_after(50ms))
      .workflow([](rivetkit::WorkflowContext<Types>& wf) -> Task<void> {
        co_await wf.step("prepare", [](auto&) {});
        co_await wf.step("block", [](auto& c) { return block_until_released(c); });
        co_await wf.step("finish", [](auto& c) { c.state().finishedAt = now_ms(); });
      })
      .action("getState", [](auto& c) { return c.read_state(); })
      .action("release", [](auto& c) { released_steps().insert(c.actor_id()); });
}

// ---- workflowAccessActor ------------------------------------------------------------------------

struct AccessState {
  std::optional<std::string> outsideDbError;
  std::optional<std::string> outsideClientError;
  std::int64_t insideDbCount = 0;
  bool insideClientAvailable = false;
};
RIVETKIT_FIELDS(
    AccessState, outsideDbError, outsideClientError, insideDbCount, insideClientAvailable)
using AccessTypes = rivetkit::ActorTypes<AccessState>;

Task<void> access_inside(rivetkit::StepContext<AccessTypes> c) {
  auto insert = c.db().execute("INSERT INTO workflow_access_log (created_at) VALUES (?)", now_ms());
  co_await std::move(insert);
  auto count = c.db().execute("SELECT COUNT(*) AS count FROM workflow_access_log");
  auto counted = co_await std::move(count);
  (void)c.client();
  c.state().insideDbCount = counted.rows.at(0).at(0).as_int();
  c.state().insideClientAvailable = true;
}

template <class F>
std::optional<std::string> error_of(F f) {
  try {
    f();
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

rivetkit::ActorDefinition workflow_access_actor() {
  return rivetkit::actor<AccessTypes>("workflowAccessActor")
      .database({{1,
                  "CREATE TABLE IF NOT EXISTS workflow_access_log (id INTEGER PRIMARY KEY "
                  "AUTOINCREMENT, created_at INTEGER NOT NULL)"}})
      .workflow([](rivetkit::WorkflowContext<AccessTypes>& wf) -> Task<void> {
        std::optional<rivetkit::StepContext<AccessTypes>> leaked;
        auto* kept = &leaked;
        co_await wf.loop("access", [kept](auto& lc) -> Task<Loop> {
          co_await lc.step("access-step", [kept](auto& c) {
            kept->emplace(c);
            return access_inside(c);
          });
          // (the lambda captures strings: built outside the co_await expression for g++ 12)
          // (none kept when the access step replayed instead of running: RivetKit's `leaked?.db`)
          auto record = [db_error = *kept ? error_of([&] { (void)(*kept)->db(); }) : std::nullopt,
                         client_error = *kept ? error_of([&] { (void)(*kept)->client(); })
                                              : std::nullopt](auto& c) {
            c.state().outsideDbError = db_error;
            c.state().outsideClientError = client_error;
          };
          auto op = lc.step("record-access", std::move(record));
          co_await std::move(op);
          co_await lc.sleep("idle", 25ms);
          co_return Loop::next();
        });
      })
      .action("getState", [](auto& c) { return c.read_state(); });
}

// ---- workflowQueueActor -------------------------------------------------------------------------

constexpr const char* kQueueName = "workflow-default";
constexpr const char* kNestedQueue = "workflow-nested";

struct ReceivedState {
  std::vector<rivetkit::Value> received;
};
RIVETKIT_FIELDS(ReceivedState, received)
using QueueTypes = rivetkit::ActorTypes<ReceivedState>;

Task<rivetkit::Value> send_to_self(rivetkit::Context<QueueTypes> c, rivetkit::Value payload) {
  auto handle = c.client().get_for_id("workflowQueueActor", c.actor_id());
  auto op = handle.send_and_wait(kQueueName, payload, 1000ms);
  auto r = co_await std::move(op);
  co_return rivetkit::Value::object(
      {{"status", rivetkit::Value(r.status)}, {"response", r.response}});
}

rivetkit::ActorDefinition workflow_queue_actor() {
  return rivetkit::actor<QueueTypes>("workflowQueueActor")
      .queue(kQueueName)
      .workflow([](rivetkit::WorkflowContext<QueueTypes>& wf) -> Task<void> {
        co_await wf.loop("queue", [](auto& lc) -> Task<Loop> {
          rivetkit::QueueNextOptions next;
          next.names = {kQueueName};
          next.completable = true;
          auto message = co_await lc.queue_next("queue-wait", next);
          auto store = [message](auto& c) -> Task<void> {
            c.state().received.push_back(message.body);
            auto op = message.complete(rivetkit::Value::object({{"echo", message.body}}));
            co_await std::move(op);
          };
          auto op = lc.step("store-message", std::move(store));
          co_await std::move(op);
          co_return Loop::next();
        });
      })
      .action("getMessages", [](auto& c) { return c.read_state().received; })
      .action("sendAndWait",
              [](auto& c, rivetkit::Value payload) { return send_to_self(c, std::move(payload)); });
}

// ---- workflowNestedLoopActor / workflowNestedJoinActor / workflowNestedRaceActor ----------------

struct ProcessedState {
  std::vector<std::string> processed;
};
RIVETKIT_FIELDS(ProcessedState, processed)
using NestedTypes = rivetkit::ActorTypes<ProcessedState>;

struct ItemsBody {
  std::vector<std::string> items;
};
RIVETKIT_FIELDS(ItemsBody, items)

rivetkit::QueueNextOptions nested_wait() {
  rivetkit::QueueNextOptions next;
  next.names = {kNestedQueue};
  next.completable = true;
  return next;
}

rivetkit::Value processed_count(std::size_t n) {
  return rivetkit::Value::object({{"processed", rivetkit::Value(static_cast<std::int64_t>(n))}});
}

rivetkit::ActorDefinition workflow_nested_loop_actor() {
  return rivetkit::actor<NestedTypes>("workflowNestedLoopActor")
      .options(sleep_after(1000ms))
      .queue(kNestedQueue)
      .workflow([](rivetkit::WorkflowContext<NestedTypes>& wf) -> Task<void> {
        co_await wf.loop("command-loop", [](auto& lc) -> Task<Loop> {
          auto message = co_await lc.template queue_next<ItemsBody>("wait", nested_wait());
          const auto* items = &message.body.items;
          using Index = rivetkit::LoopResult<rivetkit::Empty, std::int64_t>;
          co_await lc.loop("process-items", std::int64_t{0},
                           [items](auto& inner, std::int64_t& index) -> Task<Index> {
                             if (index >= static_cast<std::int64_t>(items->size())) {
                               co_return Index::done();
                             }
                             const auto item = (*items)[static_cast<std::size_t>(index)];
                             auto step = [item](auto& c) {
                               c.state().processed.push_back(item);
                             };
                             auto op = inner.step("process-item-" + std::to_string(index), step);
                             co_await std::move(op);
                             co_return Index::next(index + 1);
                           });
          auto done = message.complete(processed_count(items->size()));
          co_await std::move(done);
          co_return Loop::next();
        });
      })
      .action("getState", [](auto& c) { return c.read_state(); });
}

rivetkit::ActorDefinition workflow_nested_join_actor() {
  return rivetkit::actor<NestedTypes>("workflowNestedJoinActor")
      .options(sleep_after(50ms))
      .queue(kNestedQueue)
      .workflow([](rivetkit::WorkflowContext<NestedTypes>& wf) -> Task<void> {
        co_await wf.loop("command-loop", [](auto& lc) -> Task<Loop> {
          auto message = co_await lc.template queue_next<ItemsBody>("wait", nested_wait());
          std::vector<rivetkit::Branch<NestedTypes, std::string>> branches;
          for (std::size_t i = 0; i < message.body.items.size(); ++i) {
            const auto item = message.body.items[i];
            branches.push_back({"item-" + std::to_string(i),
                                [i, item](rivetkit::WorkflowContext<NestedTypes>& bc) {
                                  return bc.step("process-item-" + std::to_string(i),
                                                 [item](auto& c) {
                                                   c.state().processed.push_back(item);
                                                   return item;
                                                 });
                                }});
          }
          auto op = lc.join("process-items", std::move(branches));
          co_await std::move(op);
          auto done = message.complete(processed_count(message.body.items.size()));
          co_await std::move(done);
          co_return Loop::next();
        });
      })
      .action("getState", [](auto& c) { return c.read_state(); });
}

Task<std::string> slow_branch(rivetkit::WorkflowContext<NestedTypes>& rc) {
  auto op = rc.wait_aborted();
  co_await std::move(op);
  co_return std::string("slow");
}

rivetkit::ActorDefinition workflow_nested_race_actor() {
  return rivetkit::actor<NestedTypes>("workflowNestedRaceActor")
      .options(sleep_after(50ms))
      .queue(kNestedQueue)
      .workflow([](rivetkit::WorkflowContext<NestedTypes>& wf) -> Task<void> {
        co_await wf.loop("command-loop", [](auto& lc) -> Task<Loop> {
          auto message = co_await lc.template queue_next<ItemsBody>("wait", nested_wait());
          if (!message.body.items.empty()) {
            const auto item = message.body.items.front();
            std::vector<rivetkit::Branch<NestedTypes, std::string>> branches;
            branches.push_back({"fast", [item](rivetkit::WorkflowContext<NestedTypes>& rc) {
                                  return rc.step("process-fast", [item](auto& c) {
                                    c.state().processed.push_back(item);
                                    return item;
                                  });
                                }});
            branches.push_back({"slow", [](rivetkit::WorkflowContext<NestedTypes>& rc) {
                                  return slow_branch(rc);
                                }});
            auto op = lc.race("process-item", std::move(branches));
            co_await std::move(op);
          }
          auto done = message.complete(processed_count(message.body.items.size()));
          co_await std::move(done);
          co_return Loop::next();
        });
      })
      .action("getState", [](auto& c) { return c.read_state(); });
}

// ---- workflowSpawnChildActor / workflowSpawnParentActor -----------------------------------------

struct ChildState {
  std::string label;
  bool started = false;
  std::vector<std::string> processed;
};
RIVETKIT_FIELDS(ChildState, label, started, processed)

struct TaskBody {
  std::string task;
};
RIVETKIT_FIELDS(TaskBody, task)

rivetkit::ActorDefinition workflow_spawn_child_actor() {
  using Types = rivetkit::ActorTypes<ChildState, rivetkit::Value, rivetkit::Empty, rivetkit::Value,
                                     rivetkit::Value>;
  return rivetkit::actor<Types>("workflowSpawnChildActor")
      .options(sleep_after(1000ms))
      .queue("work")
      .create_state([](auto&, const rivetkit::Value& input) {
        ChildState s;
        s.label = input.is_string() ? input.as_string() : std::string();
        return s;
      })
      .workflow([](rivetkit::WorkflowContext<Types>& wf) -> Task<void> {
        co_await wf.step("mark-started", [](auto& c) { c.state().started = true; });
        co_await wf.loop("cmd-loop", [](auto& lc) -> Task<Loop> {
          rivetkit::QueueNextOptions next;
          next.names = {"work"};
          next.completable = true;
          auto message = co_await lc.template queue_next<TaskBody>("wait-cmd", next);
          auto step = [task = message.body.task](auto& c) {
            c.state().processed.push_back(task);
          };
          auto op = lc.step("process-cmd", step);
          co_await std::move(op);
          auto done = message.complete(rivetkit::Value::object({{"ok", rivetkit::Value(true)}}));
          co_await std::move(done);
          co_return Loop::next();
        });
      })
      .action("getState", [](auto& c) { return c.read_state(); });
}

struct SpawnResult {
  std::string key;
  std::optional<rivetkit::Value> result;
  std::optional<std::string> error;
};
RIVETKIT_FIELDS(SpawnResult, key, result, error)
struct ParentState {
  std::vector<SpawnResult> results;
};
RIVETKIT_FIELDS(ParentState, results)
using ParentTypes = rivetkit::ActorTypes<ParentState>;

struct KeyBody {
  std::string key;
};
RIVETKIT_FIELDS(KeyBody, key)

Task<void> spawn_child(rivetkit::StepContext<ParentTypes> c, std::string key) {
  SpawnResult out;
  out.key = key;
  try {
    rivetkit::CreateOptions create;
    create.input = rivetkit::Value(key);
    auto handle = c.client().get_or_create("workflowSpawnChildActor", {key}, create);
    auto op = handle.send_and_wait("work", TaskBody{"hello"}, 500ms);
    auto r = co_await std::move(op);
    out.result =
        rivetkit::Value::object({{"status", rivetkit::Value(r.status)}, {"response", r.response}});
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  c.state().results.push_back(std::move(out));
}

rivetkit::ActorDefinition workflow_spawn_parent_actor() {
  return rivetkit::actor<ParentTypes>("workflowSpawnParentActor")
      .options(sleep_after(50ms))
      .queue("spawn")
      .workflow([](rivetkit::WorkflowContext<ParentTypes>& wf) -> Task<void> {
        co_await wf.loop("parent-loop", [](auto& lc) -> Task<Loop> {
          rivetkit::QueueNextOptions next;
          next.names = {"spawn"};
          next.completable = true;
          auto message = co_await lc.template queue_next<KeyBody>("wait-parent", next);
          auto step = [key = message.body.key](auto& c) {
            return spawn_child(c, key);
          };
          auto op = lc.step("spawn-child", step);
          co_await std::move(op);
          auto done = message.complete(rivetkit::Value::object({{"ok", rivetkit::Value(true)}}));
          co_await std::move(done);
          co_return Loop::next();
        });
      })
      .action("triggerSpawn",
              [](auto& c, std::string key) -> Task<rivetkit::Value> {
                auto op = c.queue().send("spawn", KeyBody{std::move(key)});
                co_await std::move(op);
                co_return rivetkit::Value::object({{"queued", rivetkit::Value(true)}});
              })
      .action("getState", [](auto& c) { return c.read_state(); });
}

// ---- workflowTryActor / workflowStepRollForwardActor --------------------------------------------

struct TryFailure {
  std::string kind;
  std::string message;
  std::int64_t attempts = 0;
};
RIVETKIT_FIELDS(TryFailure, kind, message, attempts)
struct TryState {
  std::int64_t innerWrites = 0;
  std::optional<TryFailure> tryStepFailure;
  std::optional<std::string> tryJoinFailure;
};
RIVETKIT_FIELDS(TryState, innerWrites, tryStepFailure, tryJoinFailure)
struct TryVars {
  std::int64_t innerWrites = 0;
  std::int64_t recoveryWrites = 0;
};
RIVETKIT_FIELDS(TryVars, innerWrites, recoveryWrites)
using TryTypes = rivetkit::ActorTypes<TryState, rivetkit::Value, TryVars>;

Task<std::string> failing_branch(rivetkit::WorkflowContext<TryTypes>&) {
  throw std::runtime_error("join failed");
  co_return std::string();
}
Task<std::string> ok_branch(rivetkit::WorkflowContext<TryTypes>&) {
  co_return std::string("ok");
}

rivetkit::ActorDefinition workflow_try_actor() {
  return rivetkit::actor<TryTypes>("workflowTryActor")
      .options(sleep_after(50ms))
      .workflow([](rivetkit::WorkflowContext<TryTypes>& wf) -> Task<void> {
        auto charge = [](auto& c) {
          c.state().innerWrites += 1;
          c.vars().innerWrites += 1;
          throw std::runtime_error("card declined");
        };
        auto step_op = wf.try_step("charge-card", charge, StepOptions{0});
        auto step_result = co_await std::move(step_op);
        auto block = [](rivetkit::WorkflowContext<TryTypes>& bc)
            -> Task<std::map<std::string, std::string>> {
          std::vector<rivetkit::Branch<TryTypes, std::string>> branches;
          branches.push_back({"ok", ok_branch});
          branches.push_back({"bad", failing_branch});
          auto op = bc.join("parallel", std::move(branches));
          co_return co_await std::move(op);
        };
        auto block_op = wf.try_block("parallel-flow", block);
        auto join_result = co_await std::move(block_op);
        auto store = [step_result, join_result](auto& c) {
          c.vars().recoveryWrites += 1;
          if (!step_result.ok) {
            c.state().tryStepFailure =
                TryFailure{step_result.failure.kind, step_result.failure.error.message,
                           static_cast<std::int64_t>(step_result.failure.attempts)};
          }
          if (!join_result.ok) {
            c.state().tryJoinFailure = join_result.failure.source + ":" + join_result.failure.name;
          }
        };
        auto store_op = wf.step("store-try-results", store);
        co_await std::move(store_op);
      })
      .action("getState", [](auto& c) {
        rivetkit::Value v = rivetkit::to_value(c.read_state());
        v.set("vars", rivetkit::to_value(c.vars()));
        return v;
      });
}

struct RollState {
  std::int64_t failedStateWrites = 0;
  std::int64_t recoveryStateWrites = 0;
  bool failureCaught = false;
};
RIVETKIT_FIELDS(RollState, failedStateWrites, recoveryStateWrites, failureCaught)
struct RollVars {
  std::int64_t failedVarsWrites = 0;
  std::int64_t recoveryVarsWrites = 0;
};
RIVETKIT_FIELDS(RollVars, failedVarsWrites, recoveryVarsWrites)
using RollTypes = rivetkit::ActorTypes<RollState, rivetkit::Value, RollVars>;

Task<void> failing_step_block(rivetkit::WorkflowContext<RollTypes>& tc) {
  auto failing = [](auto& c) {
    c.state().failedStateWrites += 1;
    c.vars().failedVarsWrites += 1;
    throw std::runtime_error("step roll forward");
  };
  auto op = tc.step("failing-step", failing, StepOptions{0});
  co_await std::move(op);
}

rivetkit::ActorDefinition workflow_step_roll_forward_actor() {
  return rivetkit::actor<RollTypes>("workflowStepRollForwardActor")
      .options(sleep_after(50ms))
      .workflow([](rivetkit::WorkflowContext<RollTypes>& wf) -> Task<void> {
        auto block_op = wf.try_block("recover-failed-step", failing_step_block);
        auto result = co_await std::move(block_op);
        auto record = [caught = !result.ok](auto& c) {
          c.state().recoveryStateWrites += 1;
          c.vars().recoveryVarsWrites += 1;
          c.state().failureCaught = caught;
        };
        auto op = wf.step("record-recovery", record);
        co_await std::move(op);
      })
      .action("getSnapshot", [](auto& c) {
        return rivetkit::Value::object({{"state", rivetkit::to_value(c.read_state())},
                                        {"vars", rivetkit::to_value(c.vars())}});
      });
}

// ---- workflowStopTeardownActor ------------------------------------------------------------------

struct TeardownState {
  std::vector<std::int64_t> wakeAts;
  std::vector<std::int64_t> sleepAts;
};
RIVETKIT_FIELDS(TeardownState, wakeAts, sleepAts)

rivetkit::ActorDefinition workflow_stop_teardown_actor() {
  using Types = rivetkit::ActorTypes<TeardownState>;
  rivetkit::ActorOptions options = sleep_after(75ms);
  options.sleep_grace_period = 250ms;
  return rivetkit::actor<Types>("workflowStopTeardownActor")
      .options(options)
      .queue("never")
      .on_wake([](auto& c) { c.state().wakeAts.push_back(now_ms()); })
      .on_sleep([](auto& c) { c.state().sleepAts.push_back(now_ms()); })
      .workflow([](rivetkit::WorkflowContext<Types>& wf) -> Task<void> {
        co_await wf.loop("wait-forever", [](auto& lc) -> Task<Loop> {
          rivetkit::QueueNextOptions next;
          next.names = {"never"};
          co_await lc.queue_next("wait-for-never", next);
          co_return Loop::next();
        });
      })
      .action("getTimeline", [](auto& c) { return c.read_state(); });
}

// ---- workflowErrorHookEffectsActor --------------------------------------------------------------

struct EffectsState {
  std::int64_t attempts = 0;
  std::optional<rivetkit::Value> lastError;
  std::int64_t errorCount = 0;
};
RIVETKIT_FIELDS(EffectsState, attempts, lastError, errorCount)
using EffectsTypes = rivetkit::ActorTypes<EffectsState>;

Task<void> effects_workflow(rivetkit::WorkflowContext<EffectsTypes>& wf) {
  rivetkit::QueueNextOptions start;
  start.names = {"start"};
  auto wait = wf.queue_next("start", start);
  co_await std::move(wait);
  co_await flaky_then_idle(wf);
}

Task<void> effects_on_error(rivetkit::Context<EffectsTypes> c, rivetkit::Value event) {
  c.state().lastError = event;
  c.state().errorCount += 1;
  c.broadcast("workflowError", event);
  auto op = c.queue().send("errors", event);
  co_await std::move(op);
}

Task<rivetkit::Value> receive_queued_error(rivetkit::Context<EffectsTypes> c) {
  rivetkit::QueueReceive r;
  r.names = {"errors"};
  r.timeout = 1000ms;
  auto op = c.queue().next(r);
  auto m = co_await std::move(op);
  co_return m ? m->body() : rivetkit::Value();
}

Task<void> start_effects(rivetkit::Context<EffectsTypes> c) {
  auto handle = c.client().get_for_id("workflowErrorHookEffectsActor", c.actor_id());
  auto op = handle.send("start", rivetkit::Value());
  co_await std::move(op);
}

rivetkit::ActorDefinition workflow_error_hook_effects_actor() {
  return rivetkit::actor<EffectsTypes>("workflowErrorHookEffectsActor")
      .event("workflowError")
      .queue("start")
      .queue("errors")
      .workflow([](rivetkit::WorkflowContext<EffectsTypes>& wf) { return effects_workflow(wf); },
                [](auto& c, const rivetkit::Value& event) { return effects_on_error(c, event); })
      .action("getErrorState", [](auto& c) { return c.read_state(); })
      .action("startWorkflow", [](auto& c) { return start_effects(c); })
      .action("receiveQueuedError", [](auto& c) { return receive_queued_error(c); });
}

// ---- workflowTimerActor (rivetkit-cpp's own, for tests/js/integration/workflow.test.mjs) -------
// A step, a durable sleep of `napMs` (its input) that outlasts the 100 ms sleep timeout, then a
// step: the actor sleeps in between and the wake alarm brings it back.

struct TimerState {
  std::int64_t napMs = 1500;
  std::int64_t wakes = 0;
  std::int64_t sleeps = 0;
  std::optional<std::int64_t> beforeAt;
  std::optional<std::int64_t> afterAt;
};
RIVETKIT_FIELDS(TimerState, napMs, wakes, sleeps, beforeAt, afterAt)

rivetkit::ActorDefinition workflow_timer_actor() {
  using Types = rivetkit::ActorTypes<TimerState, rivetkit::Value, rivetkit::Empty, rivetkit::Value,
                                     std::int64_t>;
  return rivetkit::actor<Types>("workflowTimerActor")
      .options(sleep_after(100ms))
      .create_state([](auto&, std::int64_t nap) {
        TimerState s;
        s.napMs = nap > 0 ? nap : 1500;
        return s;
      })
      .on_wake([](auto& c) { c.state().wakes += 1; })
      .on_sleep([](auto& c) { c.state().sleeps += 1; })
      .workflow([](rivetkit::WorkflowContext<Types>& wf) -> Task<void> {
        const auto nap = co_await wf.step("before", [](auto& c) {
          c.state().beforeAt = now_ms();
          return c.read_state().napMs;
        });
        co_await wf.sleep("nap", std::chrono::milliseconds(nap));
        co_await wf.step("after", [](auto& c) { c.state().afterAt = now_ms(); });
      })
      .action("getState", [](auto& c) { return c.read_state(); });
}

// ---- workflowExactlyOnceQueueActor (rivetkit-cpp's own) ----------------------------------------
// A workflow serving an exactly-once queue whose hold would last 60 s: each message is recorded
// and answered at once (the wait's record is the exactly-once point; the hold is released).

rivetkit::ActorDefinition workflow_exactly_once_queue_actor() {
  rivetkit::QueueDelivery delivery;
  delivery.exactly_once = true;
  delivery.visibility_timeout = 60s;
  return rivetkit::actor<QueueTypes>("workflowExactlyOnceQueueActor")
      .queue("ledger", delivery)
      .workflow([](rivetkit::WorkflowContext<QueueTypes>& wf) -> Task<void> {
        co_await wf.loop("ledger", [](auto& lc) -> Task<Loop> {
          rivetkit::QueueNextOptions next;
          next.names = {"ledger"};
          next.completable = true;
          auto message = co_await lc.queue_next("entry", next);
          auto store = [message](auto& c) {
            c.state().received.push_back(message.body);
          };
          auto op = lc.step("book", std::move(store));
          co_await std::move(op);
          auto done = message.complete(rivetkit::Value::object({{"booked", message.body}}));
          co_await std::move(done);
          co_return Loop::next();
        });
      })
      .action("getMessages", [](auto& c) { return c.read_state().received; });
}

// ---- workflowSagaActor (rivetkit-cpp's own) -----------------------------------------------------
// An order as a saga: reserve stock and charge, each with an undo, after a rollback checkpoint;
// then ship, which (by the input) asks for a rollback or throws. `failUndoOnce` makes the refund
// fail its first time, so the rollback stops there and the next start of the actor finishes it.

struct SagaInput {
  std::string failWith = "none";  // "none", "rollback" or "error"
  bool failUndoOnce = false;
};
RIVETKIT_FIELDS(SagaInput, failWith, failUndoOnce)

struct SagaState {
  SagaInput input;
  std::int64_t stock = 10;
  std::int64_t balance = 0;
  std::int64_t undoFailures = 0;
  std::vector<std::string> log;
  std::vector<rivetkit::Value> events;
};
RIVETKIT_FIELDS(SagaState, input, stock, balance, undoFailures, log, events)

rivetkit::ActorDefinition workflow_saga_actor() {
  using Types =
      rivetkit::ActorTypes<SagaState, rivetkit::Value, rivetkit::Empty, rivetkit::Value, SagaInput>;
  return rivetkit::actor<Types>("workflowSagaActor")
      .options(sleep_after(100ms))
      .create_state([](auto&, SagaInput input) {
        SagaState s;
        s.input = std::move(input);
        return s;
      })
      .workflow(
          [](rivetkit::WorkflowContext<Types>& wf) -> Task<void> {
            co_await wf.rollback_checkpoint("order");
            co_await wf.step_with_rollback(
                "reserve",
                [](auto& c) {
                  c.state().stock -= 1;
                  c.state().log.push_back("reserve");
                  return std::string("r-1");
                },
                [](auto& c, const std::string& reservation) {
                  c.state().stock += 1;
                  c.state().log.push_back("release " + reservation);
                });
            co_await wf.step_with_rollback(
                "charge",
                [](auto& c) {
                  c.state().balance += 100;
                  c.state().log.push_back("charge");
                  return std::int64_t{100};
                },
                [](auto& c, const std::int64_t& amount) {
                  if (c.state().input.failUndoOnce && c.state().undoFailures == 0) {
                    c.state().undoFailures += 1;
                    throw std::runtime_error("bank offline");
                  }
                  c.state().balance -= amount;
                  c.state().log.push_back("refund " + std::to_string(amount));
                });
            co_await wf.step(
                "ship",
                [](auto& c) {
                  const auto& fail = c.state().input.failWith;
                  if (fail == "rollback") {
                    throw rivetkit::workflow_rollback("carrier unavailable");
                  }
                  if (fail == "error") {
                    throw std::runtime_error("label printer jammed");
                  }
                  c.state().log.push_back("ship");
                },
                StepOptions{1, 1ms, 1ms});
          },
          [](auto& c, const rivetkit::Value& event) { c.state().events.push_back(event); })
      .action("getState", [](auto& c) { return c.read_state(); });
}

}  // namespace

void add_workflow_actors(rivetkit::Registry& registry) {
  registry.add(workflow_exactly_once_queue_actor());
  registry.add(workflow_saga_actor());
  registry.add(workflow_counter_actor());
  registry.add(workflow_sleep_actor());
  registry.add(workflow_complete_actor());
  registry.add(workflow_failed_step_actor());
  registry.add(workflow_destroy_actor());
  registry.add(workflow_error_hook_actor());
  registry.add(workflow_error_hook_sleep_actor());
  registry.add(workflow_replay_actor());
  registry.add(workflow_running_step_actor());
  registry.add(workflow_access_actor());
  registry.add(workflow_timer_actor());
  registry.add(workflow_queue_actor());
  registry.add(workflow_nested_loop_actor());
  registry.add(workflow_nested_join_actor());
  registry.add(workflow_nested_race_actor());
  registry.add(workflow_spawn_child_actor());
  registry.add(workflow_spawn_parent_actor());
  registry.add(workflow_try_actor());
  registry.add(workflow_step_roll_forward_actor());
  registry.add(workflow_stop_teardown_actor());
  registry.add(workflow_error_hook_effects_actor());
}

}  // namespace fixture
