// save-state.ts: saves that must be durable before a hard crash, and the observer that records
// how far the saving action got. (The suite's native harness has no hard-crash helper, so its
// tests return early.)

#include "fixture.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace fixture {
namespace {

using namespace std::chrono_literals;

struct SaveStateObserverState {
  std::map<std::string, std::string> phases;
};
RIVETKIT_FIELDS(SaveStateObserverState, phases)

rivetkit::ActorDefinition save_state_observer() {
  return rivetkit::actor<SaveStateObserverState>("saveStateObserver")
      .action("recordPhase",
              [](auto& c, std::string key, std::string phase) { c.state().phases[key] = phase; })
      .action("getPhase",
              [](auto& c, std::string key) -> std::optional<std::string> {
                const auto& phases = std::as_const(c).state().phases;
                auto it = phases.find(key);
                if (it == phases.end()) {
                  return std::nullopt;
                }
                return it->second;
              })
      .action("reset", [](auto& c, std::string key) { c.state().phases.erase(key); });
}

struct SaveStateState {
  double value = 0;
};
RIVETKIT_FIELDS(SaveStateState, value)

/// saveStateObserver.getOrCreate(["observer"]).recordPhase(key, phase).
rivetkit::Task<void> record_phase(rivetkit::Client client, std::string key, std::string phase) {
  auto op = client.get_or_create("saveStateObserver", std::vector<std::string>{"observer"})
                .action("recordPhase", key, phase);
  co_await std::move(op);
}

/// Never returns (the action is left hanging for the crash to interrupt).
template <class Ctx>
rivetkit::Task<void> block_forever(Ctx c) {
  for (;;) {
    co_await c.wait(std::chrono::hours(1));
  }
}

rivetkit::ActorDefinition save_state_actor() {
  return rivetkit::actor<SaveStateState>("saveStateActor")
      .action("getValue", [](auto& c) { return std::as_const(c).state().value; })
      .action("saveImmediateAndBlock",
              [](auto& c, double value) -> rivetkit::Task<void> {
                c.state().value = value;
                co_await c.save_state();
                auto record = record_phase(c.client(), joined_key(c.key()), "immediate");
                co_await std::move(record);
                co_await block_forever(c);
              })
      .action("saveDeferredAndBlock",
              [](auto& c, double value, double max_wait_ms) -> rivetkit::Task<void> {
                c.state().value = value;
                // RivetKit's `maxWait` bounds how long the save may be deferred; save_state()
                // always saves at once, which meets any bound.
                (void)max_wait_ms;
                co_await c.save_state();
                auto record = record_phase(c.client(), joined_key(c.key()), "deferred");
                co_await std::move(record);
                co_await block_forever(c);
              });
}

}  // namespace

void add_save_state_actors(rivetkit::Registry& registry) {
  registry.add(save_state_observer());
  registry.add(save_state_actor());
}

}  // namespace fixture
