// The counter example: the actor from the RivetKit quickstart, in C++.
//
//   make run            # serves it on http://127.0.0.1:6420
//
// and from Node with the official client:
//
//   const client = createClient();                 // http://localhost:6420, bare encoding
//   const counter = client.counter.getOrCreate(["k"]);
//   await counter.increment(5);                    // 5
//   const conn = counter.connect();
//   conn.on("newCount", (n) => console.log(n));

#include <rivetkit/rivetkit.hpp>

#include <cstdint>

struct CounterState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(CounterState, count)

rivetkit::ActorDefinition counter() {
  return rivetkit::actor<CounterState>("counter")
      .event<std::int64_t>("newCount")  // typed for TypeScript clients (--emit-types)
      .action("increment",
              [](auto& c, std::int64_t amount) {
                // `amount` comes from the client: a plain += could overflow (undefined
                // behaviour), so the sum is checked and an overflow is the caller's error.
                std::int64_t next = 0;
                if (__builtin_add_overflow(c.state().count, amount, &next)) {
                  throw rivetkit::UserError("increment would overflow the count (a 64-bit integer)",
                                            "count_overflow");
                }
                c.state().count = next;
                c.broadcast("newCount", c.state().count);
                return c.state().count;
              })
      .action("getCount", [](auto& c) { return c.state().count; });
}

int main(int argc, char** argv) {
  rivetkit::Registry registry;
  registry.add(counter());
  return registry.run(argc, argv);
}
