// destroy.ts: destroy semantics (fresh state and vars after re-creation, stale handles) and the
// observer the destroyed actors report to.

#include "actors/request_view.hpp"
#include "fixture.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace fixture {
namespace {

struct DestroyObserverState {
  std::vector<std::string> destroyedActors;
};
RIVETKIT_FIELDS(DestroyObserverState, destroyedActors)

rivetkit::ActorDefinition destroy_observer() {
  return rivetkit::actor<DestroyObserverState>("destroyObserver")
      .action("notifyDestroyed",
              [](auto& c, std::string key) { c.state().destroyedActors.push_back(key); })
      .action("wasDestroyed",
              [](auto& c, std::string key) {
                const auto& v = std::as_const(c).state().destroyedActors;
                return std::find(v.begin(), v.end(), key) != v.end();
              })
      .action("reset", [](auto& c) { c.state().destroyedActors.clear(); });
}

struct DestroyState {
  double value = 0;
  std::string key;
};
RIVETKIT_FIELDS(DestroyState, value, key)

struct DestroyVars {
  std::string ephemeral = "fresh";
};

using DestroyTypes = rivetkit::ActorTypes<DestroyState, rivetkit::Value, DestroyVars>;

rivetkit::ActorDefinition destroy_actor() {
  return rivetkit::actor<DestroyTypes>("destroyActor")
      .create_vars([](auto&) { return DestroyVars{}; })
      .queue("values")
      .on_wake([](auto& c) { c.state().key = joined_key(c.key()); })
      .on_request([](auto& c, const rivetkit::Request& req) {
        if (req.path == "/state") {
          const auto& s = std::as_const(c).state();
          return rivetkit::Response::json(
              json(rivetkit::Value::object({{"key", s.key}, {"value", s.value}})));
        }
        return rivetkit::Response(404, "Not Found");
      })
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        const auto& s = std::as_const(c).state();
        ws.send(json(
            rivetkit::Value::object({{"type", "welcome"}, {"key", s.key}, {"value", s.value}})));
      })
      .on_destroy([](auto& c) {
        return tell(c.client(), "destroyObserver", {"observer"}, "notifyDestroyed",
                    rivetkit::Value(std::as_const(c).state().key));
      })
      .action("setValue",
              [](auto& c, double value) -> rivetkit::Task<double> {
                c.state().value = value;
                co_await c.save_state();
                co_return c.state().value;
              })
      .action("getValue", [](auto& c) { return std::as_const(c).state().value; })
      .action("setEphemeral",
              [](auto& c, std::string value) {
                c.vars().ephemeral = value;
                return c.vars().ephemeral;
              })
      .action("getEphemeral", [](auto& c) { return c.vars().ephemeral; })
      .action("receiveValue",
              [](auto& c) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.names = {"values"};
                r.timeout = std::chrono::milliseconds(0);
                auto op = c.queue().next(std::move(r));
                auto m = co_await std::move(op);
                co_return m ? m->body() : rivetkit::Value(nullptr);
              })
      .action("destroy", [](auto& c) { c.destroy(); });
}

struct AbortSignalState {
  std::int64_t abortEventCount = 0;
};
RIVETKIT_FIELDS(AbortSignalState, abortEventCount)

rivetkit::ActorDefinition destroy_abort_signal_actor() {
  return rivetkit::actor<AbortSignalState>("destroyAbortSignalActor")
      .on_destroy([](auto& c) {
        return tell(c.client(), "destroyObserver", {"observer"}, "notifyDestroyed",
                    rivetkit::Value(joined_key(c.key())));
      })
      .action("requestDestroy", [](auto& c) {
        const bool before_aborted = c.aborted();
        const bool before_signal_aborted = c.abort_signal().aborted();
        c.abort_signal().on_abort([c]() mutable { c.state().abortEventCount += 1; });
        c.destroy();
        return rivetkit::Value::object(
            {{"beforeDestroyAborted", before_aborted},
             {"beforeDestroySignalAborted", before_signal_aborted},
             {"afterDestroyAborted", c.aborted()},
             {"afterDestroySignalAborted", c.abort_signal().aborted()},
             {"abortEventCountAfterDestroy", std::as_const(c).state().abortEventCount}});
      });
}

}  // namespace

void add_destroy_actors(rivetkit::Registry& registry) {
  registry.add(destroy_observer());
  registry.add(destroy_actor());
  registry.add(destroy_abort_signal_actor());
}

}  // namespace fixture
