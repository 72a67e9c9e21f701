// lifecycle-hooks.ts, actor-onstatechange.ts: onBeforeConnect rejection and timeout,
// onStateChange counting, coalescing and re-entrancy.

#include "fixture.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fixture {
namespace {

using std::chrono::milliseconds;

// ---- lifecycle-hooks.ts: onBeforeConnect -----------------------------------------------------

template <class Params>
using NoStateTypes =
    rivetkit::ActorTypes<rivetkit::Empty, rivetkit::Value, rivetkit::Empty, Params>;

rivetkit::ActorDefinition before_connect_timeout_actor() {
  rivetkit::ActorOptions options;
  options.on_before_connect_timeout = milliseconds(100);
  // The hook outlasts its 100 ms timeout.
  // The connection fails with actor.callback_timed_out.
  return rivetkit::actor<NoStateTypes<rivetkit::Value>>("beforeConnectTimeoutActor")
      .options(options)
      .on_before_connect([](auto& c, const rivetkit::Value&) -> rivetkit::Task<void> {
        co_await c.wait(milliseconds(200));
      })
      .action("ping", [](auto&) { return std::string("pong"); });
}

struct RejectParams {
  std::optional<bool> shouldReject;
};
RIVETKIT_FIELDS(RejectParams, shouldReject)

rivetkit::ActorDefinition before_connect_reject_actor() {
  return rivetkit::actor<NoStateTypes<RejectParams>>("beforeConnectRejectActor")
      .on_before_connect([](auto&, const RejectParams& params) {
        if (params.shouldReject.value_or(false)) {
          throw rivetkit::UserError("Connection rejected by policy", "connection_rejected",
                                    rivetkit::Value::object({{"reason", "test"}}));
        }
      })
      .action("ping", [](auto&) { return std::string("pong"); });
}

struct FailParams {
  std::optional<bool> shouldFail;
};
RIVETKIT_FIELDS(FailParams, shouldFail)

rivetkit::ActorDefinition before_connect_generic_error_actor() {
  return rivetkit::actor<NoStateTypes<FailParams>>("beforeConnectGenericErrorActor")
      .on_before_connect([](auto&, const FailParams& params) {
        if (params.shouldFail.value_or(false)) {
          throw std::runtime_error("internal failure in onBeforeConnect");
        }
      })
      .action("ping", [](auto&) { return std::string("pong"); });
}

// ---- lifecycle-hooks.ts: onStateChange ------------------------------------------------------

struct DerivedState {
  double value = 0;
  double derivedValue = 0;
};
RIVETKIT_FIELDS(DerivedState, value, derivedValue)

struct RecursionVars {
  std::int64_t onStateChangeCallCount = 0;
  double derivedValue = 0;
};
RIVETKIT_FIELDS(RecursionVars, onStateChangeCallCount, derivedValue)

rivetkit::ActorDefinition state_change_recursion_actor() {
  // The hook writes only vars, so it must not cause further onStateChange calls.
  return rivetkit::actor<rivetkit::ActorTypes<DerivedState, rivetkit::Value, RecursionVars>>(
             "stateChangeRecursionActor")
      .on_state_change([](auto& c) {
        c.vars().derivedValue = std::as_const(c).state().value * 2;
        c.vars().onStateChangeCallCount += 1;
      })
      .action("setValue",
              [](auto& c, double new_value) {
                c.state().value = new_value;
                return c.state().value;
              })
      .action("getDerivedValue", [](auto& c) { return c.vars().derivedValue; })
      .action("getOnStateChangeCallCount", [](auto& c) { return c.vars().onStateChangeCallCount; })
      .action("getAll", [](auto& c) {
        return rivetkit::Value::object({{"value", std::as_const(c).state().value},
                                        {"derivedValue", c.vars().derivedValue},
                                        {"callCount", c.vars().onStateChangeCallCount}});
      });
}

struct ReentrantVars {
  std::int64_t callCount = 0;
  std::string errorGroup;
  std::string errorCode;
};
RIVETKIT_FIELDS(ReentrantVars, callCount, errorGroup, errorCode)

rivetkit::ActorDefinition state_change_reentrant_mutation_actor() {
  return rivetkit::actor<rivetkit::ActorTypes<DerivedState, rivetkit::Value, ReentrantVars>>(
             "stateChangeReentrantMutationActor")
      .on_state_change([](auto& c) {
        c.vars().callCount += 1;
        try {
          // Deliberately writes state from inside the hook: the runtime must reject it.
          auto& state = c.state();
          state.derivedValue = state.value * 2;
        } catch (const rivetkit::ActorError& e) {
          c.vars().errorGroup = e.error().group;
          c.vars().errorCode = e.error().code;
        }
      })
      .action("setValue",
              [](auto& c, double new_value) {
                c.state().value = new_value;
                return c.state().value;
              })
      .action("getResult", [](auto& c) {
        const auto& state = std::as_const(c).state();
        return rivetkit::Value::object({{"value", state.value},
                                        {"derivedValue", state.derivedValue},
                                        {"callCount", c.vars().callCount},
                                        {"errorGroup", c.vars().errorGroup},
                                        {"errorCode", c.vars().errorCode}});
      });
}

// ---- actor-onstatechange.ts ------------------------------------------------------------------

struct BlobState {
  double value = 0;
  std::vector<double> blob;
};
RIVETKIT_FIELDS(BlobState, value, blob)

struct ChangeVars {
  std::int64_t changeCount = 0;
};
RIVETKIT_FIELDS(ChangeVars, changeCount)

rivetkit::ActorDefinition on_state_change_actor() {
  return rivetkit::actor<rivetkit::ActorTypes<BlobState, rivetkit::Value, ChangeVars>>(
             "onStateChangeActor")
      .on_state_change([](auto& c) { c.vars().changeCount += 1; })
      .action("setValue",
              [](auto& c, double new_value) {
                c.state().value = new_value;
                return c.state().value;
              })
      .action("incrementMultiple",
              [](auto& c, std::int64_t times) {
                // One synchronous burst of mutations: one save, one onStateChange.
                for (std::int64_t i = 0; i < times; ++i) {
                  c.state().value += 1;
                }
                return c.state().value;
              })
      .action("getValue", [](auto& c) { return std::as_const(c).state().value; })
      .action("getDoubled", [](auto& c) { return std::as_const(c).state().value * 2; })
      .action("getChangeCount", [](auto& c) { return c.vars().changeCount; })
      .action("resetChangeCount", [](auto& c) { c.vars().changeCount = 0; })
      .action("stateIdentityStable",
              [](auto& c) { return &std::as_const(c).state() == &std::as_const(c).state(); })
      .action("seedLarge",
              [](auto& c, std::int64_t size) {
                auto& blob = c.state().blob;
                blob.clear();
                for (std::int64_t i = 0; i < size; ++i) {
                  blob.push_back(static_cast<double>(i));
                }
                return static_cast<std::int64_t>(blob.size());
              })
      .action("churn", [](auto& c, std::int64_t times) {
        // How long a burst of `times` mutations blocks the actor, in ms (performance.now()).
        auto start = std::chrono::steady_clock::now();
        for (std::int64_t i = 0; i < times; ++i) {
          c.state().value += 1;
        }
        std::chrono::duration<double, std::milli> elapsed =
            std::chrono::steady_clock::now() - start;
        return elapsed.count();
      });
}

}  // namespace

void add_lifecycle_hook_actors(rivetkit::Registry& registry) {
  registry.add(before_connect_timeout_actor());
  registry.add(before_connect_reject_actor());
  registry.add(before_connect_generic_error_actor());
  registry.add(state_change_recursion_actor());
  registry.add(state_change_reentrant_mutation_actor());
  registry.add(on_state_change_actor());
}

}  // namespace fixture
