// start-stop-race.ts: an actor with a slow onWake, destroyed while it starts, and the observer
// that lifecycle hooks of several fixtures report to.

#include "fixture.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace fixture {
namespace {

using namespace std::chrono_literals;

struct StartStopRaceState {
  bool initialized = false;
  std::int64_t startTime = 0;
  bool destroyCalled = false;
  bool startCompleted = false;
};
RIVETKIT_FIELDS(StartStopRaceState, initialized, startTime, destroyCalled, startCompleted)

rivetkit::ActorDefinition start_stop_race_actor() {
  return rivetkit::actor<StartStopRaceState>("startStopRaceActor")
      .on_wake([](auto& c) -> rivetkit::Task<void> {
        c.state().startTime = now_ms();
        // Slow initialisation: a window for a stop to arrive during start.
        co_await c.wait(100ms);
        c.state().initialized = true;
        c.state().startCompleted = true;
        auto record =
            record_lifecycle_event(c.client(), "observer", joined_key(c.key()), "started");
        co_await std::move(record);
      })
      .on_destroy([](auto& c) {
        c.state().destroyCalled = true;
        return record_lifecycle_event(c.client(), "observer", joined_key(c.key()), "destroy");
      })
      .action("getState", [](auto& c) { return std::as_const(c).state(); })
      .action("ping", [](auto&) { return std::string("pong"); })
      .action("destroy", [](auto& c) { c.destroy(); });
}

struct LifecycleEvent {
  std::string actorKey;
  std::string event;
  std::int64_t timestamp = 0;
};
RIVETKIT_FIELDS(LifecycleEvent, actorKey, event, timestamp)

struct LifecycleObserverState {
  std::vector<LifecycleEvent> events;
};
RIVETKIT_FIELDS(LifecycleObserverState, events)

struct RecordEventParams {
  std::string actorKey;
  std::string event;
};
RIVETKIT_FIELDS(RecordEventParams, actorKey, event)

rivetkit::ActorDefinition lifecycle_observer() {
  rivetkit::ActorOptions options;
  options.no_sleep = true;
  return rivetkit::actor<LifecycleObserverState>("lifecycleObserver")
      .options(options)
      .action("recordEvent",
              [](auto& c, RecordEventParams params) {
                c.state().events.push_back(LifecycleEvent{params.actorKey, params.event, now_ms()});
              })
      .action("getEvents", [](auto& c) { return std::as_const(c).state().events; })
      .action("clearEvents", [](auto& c) { c.state().events.clear(); });
}

}  // namespace

void add_start_stop_race_actors(rivetkit::Registry& registry) {
  registry.add(start_stop_race_actor());
  registry.add(lifecycle_observer());
}

}  // namespace fixture
