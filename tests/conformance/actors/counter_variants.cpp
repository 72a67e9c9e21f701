// counter-conn.ts, lifecycle.ts, conn-params.ts: counters that exercise connection state,
// connection lifecycle hooks and connection params.

#include "fixture.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fixture {
namespace {

// ---- counterConn: a per-connection count beside a shared connection counter -----------------

struct CounterConnState {
  double connectionCount = 0;
};
RIVETKIT_FIELDS(CounterConnState, connectionCount)

struct CounterConnConnState {
  double count = 0;
};
RIVETKIT_FIELDS(CounterConnConnState, count)

using CounterConnTypes = rivetkit::ActorTypes<CounterConnState, CounterConnConnState>;

rivetkit::ActorDefinition counter_conn() {
  return rivetkit::actor<CounterConnTypes>("counterConn")
      .on_connect([](auto& c, auto) { c.state().connectionCount += 1; })
      .on_disconnect([](auto& c, auto) { c.state().connectionCount -= 1; })
      .action("increment",
              [](auto& c, double x) {
                auto conn = c.conn();
                conn.state().count += x;
                c.broadcast("newCount", conn.state().count);
              })
      .action("setCount",
              [](auto& c, double x) {
                c.conn().state().count = x;
                c.broadcast("newCount", x);
              })
      .action("getCount", [](auto& c) { return c.conn().state().count; })
      .action("getConnectionCount",
              [](auto& c) { return std::as_const(c).state().connectionCount; });
}

// ---- counterWithLifecycle: records which hooks ran -------------------------------------------

struct LifecycleState {
  double count = 0;
  std::vector<std::string> events;
};
RIVETKIT_FIELDS(LifecycleState, count, events)

struct LifecycleParams {
  std::optional<bool> trackLifecycle;
};
RIVETKIT_FIELDS(LifecycleParams, trackLifecycle)

struct LifecycleConnState {
  std::int64_t joinTime = 0;
};
RIVETKIT_FIELDS(LifecycleConnState, joinTime)

bool tracks(const LifecycleParams& params) {
  return params.trackLifecycle.value_or(false);
}

using LifecycleTypes =
    rivetkit::ActorTypes<LifecycleState, LifecycleConnState, rivetkit::Empty, LifecycleParams>;

rivetkit::ActorDefinition counter_with_lifecycle() {
  return rivetkit::actor<LifecycleTypes>("counterWithLifecycle")
      .create_conn_state([](auto&, const LifecycleParams&) { return LifecycleConnState{now_ms()}; })
      .on_wake([](auto& c) { c.state().events.push_back("onWake"); })
      .on_before_connect([](auto& c, const LifecycleParams& params) {
        if (tracks(params)) {
          c.state().events.push_back("onBeforeConnect");
        }
      })
      .on_connect([](auto& c, auto conn) {
        if (tracks(conn.params())) {
          c.state().events.push_back("onConnect");
        }
      })
      .on_disconnect([](auto& c, auto conn) {
        if (tracks(conn.params())) {
          c.state().events.push_back("onDisconnect");
        }
      })
      .action("getEvents", [](auto& c) { return std::as_const(c).state().events; })
      .action("increment", [](auto& c, double x) {
        c.state().count += x;
        return c.state().count;
      });
}

// ---- counterWithParams: connection state from connection params ------------------------------

struct ParamsState {
  double count = 0;
  std::vector<std::string> initializers;
};
RIVETKIT_FIELDS(ParamsState, count, initializers)

struct NameParams {
  std::optional<std::string> name;
};
RIVETKIT_FIELDS(NameParams, name)

struct NameConnState {
  std::string name;
};
RIVETKIT_FIELDS(NameConnState, name)

using ParamsTypes = rivetkit::ActorTypes<ParamsState, NameConnState, rivetkit::Empty, NameParams>;

rivetkit::ActorDefinition counter_with_params() {
  return rivetkit::actor<ParamsTypes>("counterWithParams")
      .create_conn_state([](auto&, const NameParams& params) {
        // `params.name || "anonymous"`: an empty name counts as none.
        bool named = params.name.has_value() && !params.name->empty();
        return NameConnState{named ? *params.name : std::string("anonymous")};
      })
      .on_connect([](auto& c, auto conn) { c.state().initializers.push_back(conn.state().name); })
      .action("increment",
              [](auto& c, double x) {
                c.state().count += x;
                c.broadcast("newCount", rivetkit::Value::object({{"count", c.state().count},
                                                                 {"by", c.conn().state().name}}));
                return c.state().count;
              })
      .action("getInitializers", [](auto& c) { return std::as_const(c).state().initializers; });
}

}  // namespace

void add_counter_variant_actors(rivetkit::Registry& registry) {
  registry.add(counter_conn());
  registry.add(counter_with_lifecycle());
  registry.add(counter_with_params());
}

}  // namespace fixture
