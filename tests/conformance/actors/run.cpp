// run.ts: the `run` handler: ticking until aborted, returning early, throwing, asking for its own
// sleep or destroy, ignoring the abort; and an actor without one.
//
// Not written: runWithQueueConsumer (its run loop is nothing but queue receives).
// NEEDS: queues

#include "fixture.hpp"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fixture {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kRunSleepTimeout{1000};

rivetkit::ActorOptions run_options() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = kRunSleepTimeout;
  return options;
}

struct TicksState {
  std::int64_t tickCount = 0;
  std::int64_t lastTickAt = 0;
  bool runStarted = false;
  bool runExited = false;
};
RIVETKIT_FIELDS(TicksState, tickCount, lastTickAt, runStarted, runExited)

rivetkit::ActorDefinition run_with_ticks() {
  return rivetkit::actor<TicksState>("runWithTicks")
      .options(run_options())
      .run([](auto& c) -> rivetkit::Task<void> {
        c.state().runStarted = true;
        while (!c.aborted()) {
          c.state().tickCount += 1;
          c.state().lastTickAt = now_ms();
          co_await c.abort_signal().wait_for(50ms);  // returns early when the actor stops
        }
        c.state().runExited = true;
      })
      .action("getState", [](auto& c) { return std::as_const(c).state(); });
}

struct EarlyExitState {
  bool runStarted = false;
  bool runExited = false;
  bool destroyCalled = false;
  std::int64_t sleepCount = 0;
  std::int64_t wakeCount = 0;
};
RIVETKIT_FIELDS(EarlyExitState, runStarted, runExited, destroyCalled, sleepCount, wakeCount)

rivetkit::ActorDefinition run_with_early_exit() {
  return rivetkit::actor<EarlyExitState>("runWithEarlyExit")
      .options(run_options())
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .on_sleep([](auto& c) {
        c.state().sleepCount += 1;
        return record_lifecycle_event(c.client(), "run-with-early-exit", c.actor_id(), "sleep");
      })
      .run([](auto& c) -> rivetkit::Task<void> {
        c.state().runStarted = true;
        co_await c.wait(200ms);
        c.state().runExited = true;
        // Returns without waiting for the abort.
      })
      .on_destroy([](auto& c) {
        c.state().destroyCalled = true;
        return record_lifecycle_event(c.client(), "run-with-early-exit", c.actor_id(), "destroy");
      })
      .action("getState", [](auto& c) { return std::as_const(c).state(); })
      .action("destroy", [](auto& c) { c.destroy(); });
}

struct RunErrorState {
  bool runStarted = false;
  bool destroyCalled = false;
  std::int64_t sleepCount = 0;
  std::int64_t wakeCount = 0;
};
RIVETKIT_FIELDS(RunErrorState, runStarted, destroyCalled, sleepCount, wakeCount)

rivetkit::ActorDefinition run_with_error() {
  return rivetkit::actor<RunErrorState>("runWithError")
      .options(run_options())
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .run([](auto& c) -> rivetkit::Task<void> {
        c.state().runStarted = true;
        co_await c.wait(200ms);
        throw std::runtime_error("intentional error in run handler");
      })
      .on_destroy([](auto& c) { c.state().destroyCalled = true; })
      .action("getState", [](auto& c) { return std::as_const(c).state(); });
}

struct SelfSleepState {
  std::int64_t runCount = 0;
  std::int64_t wakeCount = 0;
  std::int64_t sleepCount = 0;
  std::string marker = "new";
};
RIVETKIT_FIELDS(SelfSleepState, runCount, wakeCount, sleepCount, marker)

rivetkit::ActorDefinition run_self_initiated_sleep() {
  return rivetkit::actor<SelfSleepState>("runSelfInitiatedSleep")
      .options(run_options())
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .on_sleep([](auto& c) {
        c.state().sleepCount += 1;
        c.state().marker = "slept";
      })
      .run([](auto& c) {
        c.state().runCount += 1;
        if (c.state().runCount == 1) {
          c.state().marker = "sleep-requested";
          c.sleep();
        }
      })
      .action("getState", [](auto& c) { return std::as_const(c).state(); });
}

struct SelfDestroyState {
  std::int64_t runCount = 0;
  bool destroyRequested = false;
};
RIVETKIT_FIELDS(SelfDestroyState, runCount, destroyRequested)

rivetkit::ActorDefinition run_self_initiated_destroy() {
  return rivetkit::actor<SelfDestroyState>("runSelfInitiatedDestroy")
      .run([](auto& c) {
        c.state().runCount += 1;
        if (!c.state().destroyRequested) {
          c.state().destroyRequested = true;
          c.destroy();
        }
      })
      .on_destroy([](auto& c) {
        return record_lifecycle_event(c.client(), "self-initiated-destroy", c.actor_id(),
                                      "destroy");
      })
      .action("getState", [](auto& c) { return std::as_const(c).state(); });
}

struct IgnoresAbortState {
  std::int64_t wakeCount = 0;
  std::int64_t destroyCount = 0;
};
RIVETKIT_FIELDS(IgnoresAbortState, wakeCount, destroyCount)

rivetkit::ActorDefinition run_ignores_abort_stop_timeout() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = 50ms;
  options.sleep_grace_period = 100ms;
  return rivetkit::actor<IgnoresAbortState>("runIgnoresAbortStopTimeout")
      .options(options)
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .on_destroy([](auto& c) { c.state().destroyCount += 1; })
      .run([](auto& c) -> rivetkit::Task<void> {
        // Never returns, and never looks at the abort.
        for (;;) {
          co_await c.wait(std::chrono::hours(1));
        }
      })
      .action("getState", [](auto& c) { return std::as_const(c).state(); })
      .action("destroy", [](auto& c) { c.destroy(); });
}

struct WakeCountState {
  std::int64_t wakeCount = 0;
};
RIVETKIT_FIELDS(WakeCountState, wakeCount)

rivetkit::ActorDefinition run_without_handler() {
  return rivetkit::actor<WakeCountState>("runWithoutHandler")
      .options(run_options())
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .action("getState", [](auto& c) { return std::as_const(c).state(); });
}

}  // namespace

void add_run_actors(rivetkit::Registry& registry) {
  registry.add(run_with_ticks());
  registry.add(run_with_early_exit());
  registry.add(run_with_error());
  registry.add(run_self_initiated_sleep());
  registry.add(run_self_initiated_destroy());
  registry.add(run_ignores_abort_stop_timeout());
  registry.add(run_without_handler());
}

}  // namespace fixture
