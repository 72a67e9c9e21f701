// Fixture actors for the integration suite (tests/js). Mirrors the actor app the client vectors
// were recorded against (tests/data/vectors/client/README.md), plus a few actors for hooks and
// persistence. Run: rivetkit_fixture_server --host 127.0.0.1 --port 0 --data-dir DIR

#include <rivetkit/rivetkit.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace fixture {

struct CounterState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(CounterState, count)

rivetkit::ActorDefinition counter() {
  return rivetkit::actor<CounterState>("counter")
      .action("increment",
              [](auto& c, std::int64_t amount) {
                c.state().count += amount;
                c.broadcast("newCount", c.state().count);
                return c.state().count;
              })
      .action("getCount", [](auto& c) { return c.state().count; })
      .action("echo", [](auto&, rivetkit::RestArgs args) { return args.values; })
      .action("fail",
              [](auto&) -> std::int64_t {
                throw rivetkit::UserError("this action always fails", "my_code",
                                          rivetkit::Value::object({{"a", 1}}));
              })
      .action("slow",
              [](auto& c, std::int64_t ms) -> rivetkit::Task<std::string> {
                co_await c.wait(std::chrono::milliseconds(ms));
                co_return "done";
              })
      .action("big", [](auto&, std::int64_t n) { return std::string(static_cast<std::size_t>(n), 'x'); })
      .action("whisper",
              [](auto& c, rivetkit::Value msg) {
                c.conn().send("whisper", msg);
                return true;
              })
      .on_request([](auto&, const rivetkit::Request& req) {
        rivetkit::Value headers{rivetkit::Object{}};
        for (const auto& h : req.headers) {
          headers.set(h.name, h.value);
        }
        rivetkit::Value body = rivetkit::Value::object({{"path", req.path},
                                                        {"search", req.search},
                                                        {"method", req.method},
                                                        {"headers", headers},
                                                        {"body", req.body}});
        auto resp = rivetkit::Response::json(rivetkit::to_json(body));
        resp.set_header("x-custom", "1");
        return resp;
      })
      .on_websocket([](auto&, rivetkit::WebSocket ws) {
        ws.send("hello from actor");
        ws.on_message([ws](rivetkit::WebSocketMessage msg) {
          if (msg.binary) {
            ws.send_binary(msg.data);
          } else {
            ws.send("echo:" + msg.data);
          }
        });
      });
}

struct GuardedParams {
  std::optional<std::string> token;
  std::optional<std::string> user;
};
RIVETKIT_FIELDS(GuardedParams, token, user)

struct GuardedConn {
  std::string user;
};
RIVETKIT_FIELDS(GuardedConn, user)

using GuardedTypes = rivetkit::ActorTypes<rivetkit::Empty, GuardedConn, rivetkit::Empty, GuardedParams>;

rivetkit::ActorDefinition guarded() {
  return rivetkit::actor<GuardedTypes>("guarded")
      .on_before_connect([](auto&, const GuardedParams& params) {
        if (params.token != "ok") {
          throw rivetkit::UserError("bad token", "forbidden_token");
        }
      })
      .create_conn_state([](auto&, const GuardedParams& params) {
        return GuardedConn{params.user.value_or("anon")};
      })
      .action("whoami", [](auto& c) { return c.conn().state().user; });
}

struct InputState {
  rivetkit::Value input;
};
RIVETKIT_FIELDS(InputState, input)

rivetkit::ActorDefinition with_input() {
  return rivetkit::actor<InputState>("withInput")
      .create_state([](auto&, const rivetkit::Value& input) { return InputState{input}; })
      .action("getInput", [](auto& c) { return c.state().input; });
}

struct LifecycleState {
  std::int64_t created = 0;
  std::int64_t woken = 0;
};
RIVETKIT_FIELDS(LifecycleState, created, woken)

rivetkit::ActorDefinition lifecycle() {
  return rivetkit::actor<LifecycleState>("lifecycle")
      .on_create([](auto& c) { c.state().created += 1; })
      .on_wake([](auto& c) { c.state().woken += 1; })
      .action("getLifecycle", [](auto& c) { return c.state(); });
}

}  // namespace fixture

int main(int argc, char** argv) {
  rivetkit::Registry registry;
  registry.add(fixture::counter());
  registry.add(fixture::guarded());
  registry.add(fixture::with_input());
  registry.add(fixture::lifecycle());
  return registry.run(argc, argv);
}
