// stateless.ts, state-zod-coercion.ts, vars.ts, metadata.ts: an actor without state, state
// defaults across sleep, vars (static, nested, created per start) and actor metadata.

#include "fixture.hpp"

#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace fixture {
namespace {

/// Math.random(): uniform in [0, 1).
double js_random() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

// ---- stateless.ts ----------------------------------------------------------------------------

rivetkit::ActorDefinition stateless_actor() {
  return rivetkit::actor<>("statelessActor")
      .action("ping", [](auto&) { return std::string("pong"); })
      .action("echo", [](auto&, rivetkit::Value message) { return message; })
      .action("getActorId", [](auto& c) { return c.actor_id(); })
      .action("tryGetState",
              [](auto& c) {
                // An actor without state has none: reading it throws actor.state_not_enabled.
                try {
                  const auto& state = std::as_const(c).state();
                  return rivetkit::Value::object(
                      {{"success", true}, {"state", rivetkit::to_value(state)}});
                } catch (const std::exception& e) {
                  return rivetkit::Value::object({{"success", false}, {"error", e.what()}});
                }
              })
      .action("tryGetDb", [](auto& c) -> rivetkit::Task<rivetkit::Value> {
        // An actor without a database: c.db() throws database.not_enabled.
        try {
          auto op = c.db().execute("SELECT 1");
          co_await std::move(op);
          co_return rivetkit::Value::object({{"success", true}});
        } catch (const rivetkit::ActorError& e) {
          co_return rivetkit::Value::object({{"success", false}, {"error", e.what()}});
        }
      });
}

// ---- state-zod-coercion.ts -------------------------------------------------------------------

struct CoercedState {
  double count = 0;
  std::string label = "default";
};
RIVETKIT_FIELDS(CoercedState, count, label)

rivetkit::ActorDefinition state_zod_coercion_actor() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = std::chrono::milliseconds(100);
  return rivetkit::actor<CoercedState>("stateZodCoercionActor")
      .options(options)
      .on_wake([](auto& c) {
        // Re-parse the state through its schema: decoding fills missing fields with the
        // struct's defaults (count 0, label "default") and rejects wrong types.
        auto parsed =
            rivetkit::from_value<CoercedState>(rivetkit::to_value(std::as_const(c).state()));
        c.state() = std::move(parsed);
      })
      .action("getState",
              [](auto& c) {
                const auto& state = std::as_const(c).state();
                return rivetkit::Value::object({{"count", state.count}, {"label", state.label}});
              })
      .action("setCount", [](auto& c, double count) { c.state().count = count; })
      .action("setLabel", [](auto& c, std::string label) { c.state().label = std::move(label); })
      .action("triggerSleep", [](auto& c) { c.sleep(); });
}

// ---- vars.ts ---------------------------------------------------------------------------------

struct ValueState {
  double value = 0;
};
RIVETKIT_FIELDS(ValueState, value)

struct HelloConnState {
  std::string hello = "world";
};
RIVETKIT_FIELDS(HelloConnState, hello)

// Static vars: every instance starts from a fresh copy of the declared values (the Vars type's
// defaults), so nothing is shared between instances.
struct StaticVars {
  double counter = 42;
  std::string name = "test-actor";
};
RIVETKIT_FIELDS(StaticVars, counter, name)

rivetkit::ActorDefinition static_var_actor() {
  return rivetkit::actor<rivetkit::ActorTypes<ValueState, HelloConnState, StaticVars>>(
             "staticVarActor")
      .action("getVars", [](auto& c) { return c.vars(); })
      .action("getName", [](auto& c) { return c.vars().name; });
}

struct NestedObj {
  std::string key = "value";
};
RIVETKIT_FIELDS(NestedObj, key)

struct NestedPart {
  std::string value = "original";
  std::vector<double> array = {1, 2, 3};
  NestedObj obj;
};
RIVETKIT_FIELDS(NestedPart, value, array, obj)

struct NestedVars {
  double counter = 42;
  NestedPart nested;
};
RIVETKIT_FIELDS(NestedVars, counter, nested)

rivetkit::ActorDefinition nested_var_actor() {
  return rivetkit::actor<rivetkit::ActorTypes<ValueState, HelloConnState, NestedVars>>(
             "nestedVarActor")
      .action("getVars", [](auto& c) { return c.vars(); })
      .action("modifyNested", [](auto& c) {
        auto& nested = c.vars().nested;
        nested.value = "modified";
        nested.array.push_back(4);
        nested.obj.key = "new-value";
        return c.vars();
      });
}

struct DynamicVars {
  double random = 0;
  std::string computed;
};
RIVETKIT_FIELDS(DynamicVars, random, computed)

rivetkit::ActorDefinition dynamic_var_actor() {
  return rivetkit::actor<rivetkit::ActorTypes<ValueState, HelloConnState, DynamicVars>>(
             "dynamicVarActor")
      .create_vars([](auto&) {
        DynamicVars vars;
        vars.random = js_random();
        vars.computed =
            "Actor-" + std::to_string(static_cast<std::int64_t>(std::floor(js_random() * 1000)));
        return vars;
      })
      .action("getVars", [](auto& c) { return c.vars(); });
}

struct UniqueVars {
  std::int64_t id = 0;
};
RIVETKIT_FIELDS(UniqueVars, id)

rivetkit::ActorDefinition unique_var_actor() {
  return rivetkit::actor<rivetkit::ActorTypes<ValueState, HelloConnState, UniqueVars>>(
             "uniqueVarActor")
      .create_vars([](auto&) {
        return UniqueVars{static_cast<std::int64_t>(std::floor(js_random() * 1'000'000))};
      })
      .action("getVars", [](auto& c) { return c.vars(); });
}

struct DriverCtxVars {
  bool hasDriverCtx = false;
};
RIVETKIT_FIELDS(DriverCtxVars, hasDriverCtx)

rivetkit::ActorDefinition driver_ctx_actor() {
  return rivetkit::actor<rivetkit::ActorTypes<ValueState, HelloConnState, DriverCtxVars>>(
             "driverCtxActor")
      .create_vars([](auto&, const rivetkit::DriverContext& driver) {
        return DriverCtxVars{driver.is_test};
      })
      .action("getVars", [](auto& c) { return c.vars(); });
}

// ---- metadata.ts -----------------------------------------------------------------------------

struct MetadataState {
  rivetkit::Value lastMetadata;  // null until getMetadata
  std::string actorName;
  std::map<std::string, std::string> storedTags;
  std::optional<std::string> storedRegion;
};
RIVETKIT_FIELDS(MetadataState, lastMetadata, actorName, storedTags, storedRegion)

rivetkit::ActorDefinition metadata_actor() {
  return rivetkit::actor<MetadataState>("metadataActor")
      .on_wake([](auto& c) { c.state().actorName = c.name(); })
      .action("setupTestTags",
              [](auto& c, std::map<std::string, std::string> tags) {
                c.state().storedTags = tags;
                return tags;
              })
      .action("setupTestRegion",
              [](auto& c, std::string region) {
                c.state().storedRegion = region;
                return region;
              })
      .action("getMetadata",
              [](auto& c) {
                rivetkit::Value metadata = rivetkit::Value::object(
                    {{"name", c.name()},
                     {"tags", rivetkit::to_value(c.state().storedTags)},
                     {"region", rivetkit::to_value(c.state().storedRegion)}});
                c.state().lastMetadata = metadata;
                return metadata;
              })
      .action("getActorName", [](auto& c) { return c.name(); })
      .action("getTag",
              [](auto& c, std::string key) {
                // `storedTags[key] || null`: a missing or empty tag is null.
                const auto& tags = std::as_const(c).state().storedTags;
                auto it = tags.find(key);
                return it == tags.end() || it->second.empty() ? std::optional<std::string>()
                                                              : std::optional(it->second);
              })
      .action("getTags", [](auto& c) { return std::as_const(c).state().storedTags; })
      .action("getRegion", [](auto& c) { return std::as_const(c).state().storedRegion; })
      .action("getStoredActorName", [](auto& c) { return std::as_const(c).state().actorName; })
      .action("getLastMetadata", [](auto& c) { return std::as_const(c).state().lastMetadata; });
}

}  // namespace

void add_state_actors(rivetkit::Registry& registry) {
  registry.add(stateless_actor());
  registry.add(state_zod_coercion_actor());
  registry.add(static_var_actor());
  registry.add(nested_var_actor());
  registry.add(dynamic_var_actor());
  registry.add(unique_var_actor());
  registry.add(driver_ctx_actor());
  registry.add(metadata_actor());
}

}  // namespace fixture
