// warmup.ts: a trivial actor (registered by the suite, used by no test).

#include "fixture.hpp"

namespace fixture {

void add_warmup_actors(rivetkit::Registry& registry) {
  registry.add(rivetkit::actor<>("warmupActor").action("ping", [](auto&) { return true; }));
}

}  // namespace fixture
