// workflow.ts: actors whose run handler is a durable workflow (rivetkit/workflow.hpp): steps
// replayed across sleeps, loops, durable sleeps, retries and the onError hook, completion,
// failure, a step that destroys the actor, step-only access to the database and the client.
//
// Not written yet: the actors that need workflow queue waits, joins, races or try blocks
// (workflowQueueActor, workflowNested*, workflowSpawn*, workflowTryActor,
// workflowStepRollForwardActor, workflowStopTeardownActor, workflowErrorHookEffectsActor).

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

}  // namespace

void add_workflow_actors(rivetkit::Registry& registry) {
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
}

}  // namespace fixture
