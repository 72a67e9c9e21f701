// counter.ts: the suite's workhorse.

#include "fixture.hpp"

namespace fixture {
namespace {

struct CounterState {
  double count = 0;
};
RIVETKIT_FIELDS(CounterState, count)

rivetkit::ActorDefinition counter() {
  return rivetkit::actor<CounterState>("counter")
      .action("increment",
              [](auto& c, double x) {
                c.state().count += x;
                c.broadcast("newCount", c.state().count);
                return c.state().count;
              })
      .action("setCount",
              [](auto& c, double x) {
                c.state().count = x;
                c.broadcast("newCount", x);
                return c.state().count;
              })
      .action("getCount", [](auto& c) { return std::as_const(c).state().count; })
      .action("getKey", [](auto& c) { return c.key(); });
}

}  // namespace

void add_counter_actors(rivetkit::Registry& registry) {
  registry.add(counter());
}

}  // namespace fixture
