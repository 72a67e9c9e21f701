// Fixture actors for the integration suite (tests/js). Mirrors the actor app the client vectors
// were recorded against (tests/data/vectors/client/README.md), plus a few actors for hooks and
// persistence. Run: rivetkit_fixture_server --host 127.0.0.1 --port 0 --data-dir DIR

#include "queue_worker.hpp"
#include <rivetkit/rivetkit.hpp>

#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fixture {

// A process-wide log of lifecycle hooks, readable through the `observer` actor and echoed to
// stdout (so a test can see on_sleep ran during a graceful shutdown, after which the process is
// gone).
std::mutex g_events_mutex;
std::vector<std::string> g_events;
// Off while the memory bench runs (observer `record(false)`): the log would otherwise grow by
// two strings per actor and be measured as if it were the runtime's memory.
std::atomic<bool> g_recording{true};

void record(const std::string& event) {
  if (!g_recording.load(std::memory_order_relaxed)) {
    return;
  }
  {
    std::lock_guard lock(g_events_mutex);
    g_events.push_back(event);
  }
  std::printf("fixture-event %s\n", event.c_str());
  std::fflush(stdout);
}

std::string key_of(const std::vector<std::string>& key) {
  return key.empty() ? "" : key[0];
}

/// count + amount for the counters' increment: the amount comes from the client, so an overflow
/// (undefined behaviour with a plain +=) is refused as the caller's error instead.
std::int64_t checked_add(std::int64_t count, std::int64_t amount) {
  std::int64_t next = 0;
  if (__builtin_add_overflow(count, amount, &next)) {
    throw rivetkit::UserError("increment would overflow the count (a 64-bit integer)",
                              "count_overflow");
  }
  return next;
}

struct CounterState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(CounterState, count)

rivetkit::ActorDefinition counter() {
  return rivetkit::actor<CounterState>("counter")
      .action("increment",
              [](auto& c, std::int64_t amount) {
                c.state().count = checked_add(c.state().count, amount);
                c.broadcast("newCount", c.state().count);
                return c.state().count;
              })
      .action("getCount", [](auto& c) { return c.state().count; })
      .action("logLine",
              [](auto& c, std::string message, std::string detail) {
                c.log().warn(message, {{"detail", detail}});
                return true;
              })
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
      .action("big",
              [](auto&, std::int64_t n) { return std::string(static_cast<std::size_t>(n), 'x'); })
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
          } else if (msg.data.rfind("cmd:close:", 0) == 0) {
            // "cmd:close:<code>": the actor closes with that code, or says it was refused.
            const auto code = static_cast<std::uint16_t>(std::stoul(msg.data.substr(10)));
            try {
              ws.close(code, "closed by the actor");
            } catch (const std::invalid_argument&) {
              ws.send("close refused:" + std::to_string(code));
            }
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

using GuardedTypes =
    rivetkit::ActorTypes<rivetkit::Empty, GuardedConn, rivetkit::Empty, GuardedParams>;

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

// Event subscriptions gated by rules (access-control.test.mjs): `open` has no rule, `vip` lets
// only connections with params {user: "vip"} in (decided after a wait on the actor's clock, so
// the rule is asynchronous), `broken`'s rule throws, `closed` always refuses.
struct GateParams {
  std::optional<std::string> user;
};
RIVETKIT_FIELDS(GateParams, user)

using GateTypes =
    rivetkit::ActorTypes<rivetkit::Empty, rivetkit::Empty, rivetkit::Empty, GateParams>;

rivetkit::Task<bool> vip_only(rivetkit::Context<GateTypes> c) {
  co_await c.wait(std::chrono::milliseconds(5));
  co_return c.conn().params().user == "vip";
}

rivetkit::ActorDefinition gate() {
  return rivetkit::actor<GateTypes>("gate")
      .event("open")
      .event("vip", [](auto& c) { return vip_only(c); })
      .event("broken",
             [](auto&) -> bool { throw rivetkit::UserError("the rule broke", "rule_failed"); })
      .event("closed", [](auto&) { return false; })
      .action("publish",
              [](auto& c, std::string event, rivetkit::Value value) {
                c.broadcast(std::move(event), value);
                return true;
              })
      .action("ping", [](auto&) { return std::string("pong"); });
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

// Calls other actors for the official client (actor-calls.test.mjs): every action reaches its
// target through c.client(), and the callee's errors reach the client as the relay got them.
rivetkit::Task<std::string> relay_create(rivetkit::Client client,
                                         std::string name,
                                         std::vector<std::string> key,
                                         rivetkit::Value input) {
  rivetkit::CreateOptions options;
  options.input = std::move(input);
  auto op = client.create(std::move(name), std::move(key), std::move(options));
  auto handle = co_await std::move(op);
  auto resolve_op = handle.resolve();
  co_return co_await std::move(resolve_op);
}

rivetkit::Task<bool> relay_destroy(rivetkit::Client client,
                                   std::string name,
                                   std::vector<std::string> key) {
  auto op = client.get(std::move(name), std::move(key)).destroy();
  co_await std::move(op);
  co_return true;
}

rivetkit::Task<std::string> relay_resolve(rivetkit::Client client,
                                          std::string name,
                                          std::vector<std::string> key) {
  auto op = client.get_or_create(std::move(name), std::move(key)).resolve();
  co_return co_await std::move(op);
}

// A queue send through c.client() as connection `params`; with `wait`, the result's status.
rivetkit::Task<rivetkit::Value> relay_send(rivetkit::Client client,
                                           std::string name,
                                           std::vector<std::string> key,
                                           std::string queue,
                                           rivetkit::Value body,
                                           bool wait,
                                           rivetkit::Value params) {
  rivetkit::CreateOptions options;
  options.params = std::move(params);
  auto handle = client.get_or_create(std::move(name), std::move(key), std::move(options));
  if (!wait) {
    auto op = handle.send(std::move(queue), body);
    co_await std::move(op);
    co_return rivetkit::Value("sent");
  }
  auto op = handle.send_and_wait(std::move(queue), body, std::chrono::milliseconds(5'000));
  rivetkit::QueueSendResult result = co_await std::move(op);
  co_return rivetkit::Value::object({{"status", result.status}});
}

rivetkit::ActorDefinition relay() {
  return rivetkit::actor<>("relay")
      .action("callActor",
              [](auto& c, std::string name, std::vector<std::string> key, std::string action,
                 rivetkit::Array args) {
                return c.client()
                    .get_or_create(std::move(name), std::move(key))
                    .call(std::move(action), std::move(args));
              })
      .action("getAndCall",
              [](auto& c, std::string name, std::vector<std::string> key, std::string action,
                 rivetkit::Array args) {
                return c.client()
                    .get(std::move(name), std::move(key))
                    .call(std::move(action), std::move(args));
              })
      .action(
          "callById",
          [](auto& c, std::string name, std::string id, std::string action, rivetkit::Array args) {
            return c.client()
                .get_for_id(std::move(name), std::move(id))
                .call(std::move(action), std::move(args));
          })
      .action("createActor",
              [](auto& c, std::string name, std::vector<std::string> key, rivetkit::Value input) {
                return relay_create(c.client(), std::move(name), std::move(key), std::move(input));
              })
      .action("resolveActor",
              [](auto& c, std::string name, std::vector<std::string> key) {
                return relay_resolve(c.client(), std::move(name), std::move(key));
              })
      .action("sendToActor",
              [](auto& c, std::string name, std::vector<std::string> key, std::string queue,
                 rivetkit::Value body, bool wait, rivetkit::Value params) {
                return relay_send(c.client(), std::move(name), std::move(key), std::move(queue),
                                  std::move(body), wait, std::move(params));
              })
      .action("destroyActor",
              [](auto& c, std::string name, std::vector<std::string> key) {
                return relay_destroy(c.client(), std::move(name), std::move(key));
              })
      // Sends the counter an echo of `n` bytes made here (a client could not send it to the relay
      // past the same limit).
      .action("echoOfSize",
              [](auto& c, std::vector<std::string> key, std::int64_t n) {
                return c.client()
                    .get_or_create("counter", std::move(key))
                    .call("echo", {rivetkit::Value(std::string(static_cast<std::size_t>(n), 'e'))});
              })
      .action("ping", [](auto&) { return std::string("pong"); })
      .action("pingSelf",
              [](auto& c) { return c.client().get_for_id("relay", c.actor_id()).call("ping", {}); })
      // Asks relay `other` to ping this one back: two actors waiting on each other's calls.
      .action("pingThrough", [](auto& c, std::string other) {
        return c.client()
            .get_or_create("relay", {other})
            .call("callActor", {rivetkit::Value("relay"), rivetkit::to_value(c.key()),
                                rivetkit::Value("ping"), rivetkit::Value(rivetkit::Array{})});
      });
}

// Connections between actors (actor-connections.test.mjs). `room` counts the connections whose
// params say {member: true} (on_connect / on_disconnect) and broadcasts what is said; `watcher`
// holds one connection to a room, opened with c.client()...connect(), and keeps the events it
// got in its vars.
struct RoomState {
  std::int64_t joined = 0;
  std::int64_t left = 0;
};
RIVETKIT_FIELDS(RoomState, joined, left)

bool is_member(const rivetkit::Value& params) {
  const rivetkit::Value* member = params.is_object() ? params.find("member") : nullptr;
  return member != nullptr && member->is_bool() && member->as_bool();
}

rivetkit::ActorDefinition room() {
  return rivetkit::actor<RoomState>("room")
      .on_connect([](auto& c, auto conn) {
        if (is_member(conn.params())) {
          c.state().joined += 1;
        }
      })
      .on_disconnect([](auto& c, auto conn) {
        if (is_member(conn.params())) {
          c.state().left += 1;
        }
      })
      .action("say",
              [](auto& c, std::string text) {
                c.broadcast("said", text);
                return text;
              })
      .action("whisperTo",
              [](auto& c, std::string text) {
                c.conn().send("whisper", text);
                return true;
              })
      .action("params", [](auto& c) { return c.conn().params(); })
      .action("presence", [](auto& c) { return c.state(); })
      .action("fail", [](auto&) -> std::int64_t {
        throw rivetkit::UserError("the room says no", "room_says_no",
                                  rivetkit::Value::object({{"why", "test"}}));
      });
}

struct WatcherVars {
  std::optional<rivetkit::ActorConnection> conn;
  std::vector<rivetkit::Value> received;
};
using WatcherTypes = rivetkit::ActorTypes<rivetkit::Empty, rivetkit::Value, WatcherVars>;
using WatcherCtx = rivetkit::Context<WatcherTypes>;

rivetkit::Task<std::string> watcher_join(WatcherCtx& c,
                                         std::string name,
                                         std::string key,
                                         rivetkit::Value params) {
  rivetkit::CreateOptions options;
  options.params = std::move(params);
  std::vector<std::string> k{std::move(key)};
  auto connect_op =
      c.client().get_or_create(std::move(name), std::move(k), std::move(options)).connect();
  auto conn = co_await std::move(connect_op);
  // Listeners run on this actor's strand: they may touch its vars.
  auto* vars = &c.vars();
  conn.on("said", [vars](const rivetkit::Array& args) {
    vars->received.push_back(rivetkit::Value::object({{"said", rivetkit::Value(args)}}));
  });
  conn.on("whisper", [vars](const rivetkit::Array& args) {
    vars->received.push_back(rivetkit::Value::object({{"whisper", rivetkit::Value(args)}}));
  });
  c.vars().conn = conn;
  co_return conn.connection_id();
}

rivetkit::Task<rivetkit::Value> watcher_call(WatcherCtx& c,
                                             std::string action,
                                             rivetkit::Array args) {
  if (!c.vars().conn) {
    throw rivetkit::UserError("no connection held", "not_joined");
  }
  auto op = c.vars().conn->call(std::move(action), std::move(args));
  co_return co_await std::move(op);
}

rivetkit::Task<bool> watcher_leave(WatcherCtx& c) {
  if (!c.vars().conn) {
    co_return false;
  }
  auto conn = *c.vars().conn;
  auto op = conn.dispose();
  co_await std::move(op);
  co_return conn.closed();
}

rivetkit::ActorDefinition watcher() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = std::chrono::milliseconds(60'000);  // sleeps when the test says
  return rivetkit::actor<WatcherTypes>("watcher")
      .options(options)
      .action("join",
              [](auto& c, std::string name, std::string key, rivetkit::Value params) {
                return watcher_join(c, std::move(name), std::move(key), std::move(params));
              })
      .action("callThrough",
              [](auto& c, std::string action, rivetkit::Array args) {
                return watcher_call(c, std::move(action), std::move(args));
              })
      .action("received",
              [](auto& c) { return rivetkit::Value(rivetkit::Array(c.vars().received)); })
      .action("holds", [](auto& c) { return c.vars().conn && !c.vars().conn->closed(); })
      .action("leave", [](auto& c) { return watcher_leave(c); })
      .action("goToSleep", [](auto& c) { c.sleep(); });
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

// Short timeouts so the official-client suite sees sleep, wake and grace on real time.
rivetkit::ActorOptions short_lived() {
  rivetkit::ActorOptions o;
  o.sleep_timeout = std::chrono::milliseconds(1000);
  o.sleep_grace_period = std::chrono::milliseconds(3000);
  o.schedule_retry_delay = std::chrono::milliseconds(200);
  o.schedule_max_attempts = 4;
  return o;
}

struct SleepyState {
  std::int64_t count = 0;
  std::int64_t wakes = 0;
  std::int64_t sleeps = 0;
  std::int64_t flaky_calls = 0;
  std::int64_t flaky_successes = 0;
  std::int64_t run_aborts = 0;
};
RIVETKIT_FIELDS(SleepyState, count, wakes, sleeps, flaky_calls, flaky_successes, run_aborts)

rivetkit::ActorDefinition sleepy() {
  return rivetkit::actor<SleepyState>("sleepy")
      .options(short_lived())
      .on_wake([](auto& c) {
        c.state().wakes += 1;
        record("sleepy:onWake:" + key_of(c.key()));
      })
      .on_sleep([](auto& c) {
        c.state().sleeps += 1;
        c.broadcast("sleeping", c.state().sleeps);
        record("sleepy:onSleep:" + key_of(c.key()));
      })
      .on_destroy([](auto& c) { record("sleepy:onDestroy:" + key_of(c.key())); })
      .on_connect([](auto& c, auto) { record("sleepy:onConnect:" + key_of(c.key())); })
      .on_disconnect([](auto& c, auto) { record("sleepy:onDisconnect:" + key_of(c.key())); })
      .action("increment",
              [](auto& c, std::int64_t amount) {
                c.state().count = checked_add(c.state().count, amount);
                c.broadcast("newCount", c.state().count);
                return c.state().count;
              })
      .action("getCount", [](auto& c) { return c.state().count; })
      .action("getLifecycle",
              [](auto& c) {
                rivetkit::Value v = rivetkit::to_value(c.state());
                v.set("generation", static_cast<std::int64_t>(c.generation()));
                return v;
              })
      .action("goToSleep",
              [](auto& c) {
                c.sleep();
                return true;
              })
      .action("destroySelf",
              [](auto& c) {
                c.destroy();
                return true;
              })
      .action("scheduleIncrement",
              [](auto& c, std::int64_t delay_ms, std::int64_t amount) {
                return c.schedule().after(std::chrono::milliseconds(delay_ms), "increment", amount);
              })
      .action("scheduleIncrementAt",
              [](auto& c, std::int64_t at_ms, std::int64_t amount) {
                return c.schedule().at(at_ms, "increment", amount);
              })
      .action("scheduleFlaky",
              [](auto& c, std::int64_t delay_ms, std::int64_t fail_times) {
                return c.schedule().after(std::chrono::milliseconds(delay_ms), "flaky", fail_times);
              })
      .action("flaky",
              [](auto& c, std::int64_t fail_times) {
                c.state().flaky_calls += 1;
                if (c.state().flaky_calls <= fail_times) {
                  throw rivetkit::UserError("flaky failure", "flaky");
                }
                c.state().flaky_successes += 1;
                return c.state().flaky_calls;
              })
      .action("listSchedules",
              [](auto& c) {
                rivetkit::Array out;
                for (const auto& e : c.schedule().list()) {
                  out.push_back(rivetkit::Value::object(
                      {{"id", e.id},
                       {"at", e.at_ms},
                       {"action", e.action},
                       {"attempts", static_cast<std::int64_t>(e.attempts)}}));
                }
                return out;
              })
      .action("cancelSchedule", [](auto& c, std::string id) { return c.schedule().cancel(id); })
      .action("now", [](auto& c) { return c.now_ms(); })
      .action("slowIncrement", [](auto& c, std::int64_t ms) -> rivetkit::Task<std::int64_t> {
        co_await c.wait(std::chrono::milliseconds(ms));
        c.state().count += 1;
        co_return c.state().count;
      });
}

// A `run` loop: ticks until the actor stops, and records that it was cancelled.
struct LooperState {
  std::int64_t ticks = 0;
  std::int64_t run_aborts = 0;
};
RIVETKIT_FIELDS(LooperState, ticks, run_aborts)

rivetkit::ActorDefinition looper() {
  return rivetkit::actor<LooperState>("looper")
      .options(short_lived())
      .run([](auto& c) -> rivetkit::Task<void> {
        // Ticks until the abort signal fires (the actor stops), then records that it saw it:
        // the write after the loop is saved with the final save.
        auto signal = c.abort_signal();
        while (!signal.aborted()) {
          if (!co_await signal.wait_for(std::chrono::milliseconds(50))) {
            c.state().ticks += 1;
          }
        }
        c.state().run_aborts += 1;
        record("looper:runAborted:" + key_of(c.key()));
      })
      .action("getState", [](auto& c) { return c.state(); })
      .action("goToSleep", [](auto& c) {
        c.sleep();
        return true;
      });
}

// Raw WebSockets that survive the actor's sleep.
rivetkit::ActorDefinition sleepy_raw() {
  auto options = short_lived();
  options.can_hibernate_websocket = [](const rivetkit::Request&) {
    return true;
  };
  return rivetkit::actor<>("sleepyRaw")
      .options(options)
      .on_sleep([](auto& c) { record("sleepyRaw:onSleep:" + key_of(c.key())); })
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        if (!ws.restored()) {
          ws.send("hello from actor");
        }
        std::uint32_t generation = c.generation();
        ws.on_message([ws, generation](rivetkit::WebSocketMessage msg) {
          ws.send("echo:" + msg.data + ":gen" + std::to_string(generation));
        });
      });
}

// Reads the process-wide hook log.
rivetkit::ActorDefinition observer() {
  return rivetkit::actor<>("observer")
      .action("events",
              [](auto&) {
                std::lock_guard lock(g_events_mutex);
                return g_events;
              })
      .action("clear",
              [](auto&) {
                std::vector<std::string> old;
                std::lock_guard lock(g_events_mutex);
                g_events.swap(old);  // gives the memory back, not only the elements
                return true;
              })
      // Switches the hook log (and its stdout echo) on or off; returns the previous setting.
      .action("record", [](auto&, bool on) { return g_recording.exchange(on); })
      // Heap statistics (glibc): bytes in use vs free inside the allocator, for the memory bench.
      .action("heap",
              [](auto&, std::optional<bool> trim) {
                std::int64_t trim_us = 0;
                if (trim.value_or(false)) {
                  auto t0 = std::chrono::steady_clock::now();
                  malloc_trim(0);
                  trim_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - t0)
                                .count();
                }
                struct mallinfo2 mi = mallinfo2();
                return rivetkit::Value::object({{"inUse", static_cast<std::int64_t>(mi.uordblks)},
                                                {"free", static_cast<std::int64_t>(mi.fordblks)},
                                                {"mmapped", static_cast<std::int64_t>(mi.hblkhd)},
                                                {"arena", static_cast<std::int64_t>(mi.arena)},
                                                {"trimMicros", trim_us}});
              })
      // glibc's per-arena statistics (malloc_info XML), for the memory bench's diagnostics.
      .action("mallocInfo", [](auto&) {
        char* data = nullptr;
        std::size_t size = 0;
        std::string out;
        if (FILE* f = open_memstream(&data, &size)) {
          malloc_info(0, f);
          std::fclose(f);
          out.assign(data, size);
        }
        std::free(data);
        return out;
      });
}

// A state as large as a test wants: `grow` appends blocks whose bytes follow from their index,
// `digest` says how many there are, their size and whether every byte is still what it was.
struct BallastState {
  std::vector<std::string> blocks;
};
RIVETKIT_FIELDS(BallastState, blocks)

std::string ballast_block(std::size_t index, std::size_t size) {
  std::string block(size, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    block[i] = static_cast<char>('a' + (index * 7 + i) % 26);
  }
  return block;
}

rivetkit::ActorDefinition ballast() {
  return rivetkit::actor<BallastState>("ballast")
      .action("grow",
              [](auto& c, std::int64_t count, std::int64_t size) {
                if (count < 0 || count > 1024 || size < 0 || size > (1 << 20)) {
                  throw rivetkit::UserError("grow takes at most 1024 blocks of 1 MiB", "bad_size");
                }
                for (std::int64_t i = 0; i < count; ++i) {
                  auto& blocks = c.state().blocks;
                  blocks.push_back(ballast_block(blocks.size(), static_cast<std::size_t>(size)));
                }
                return static_cast<std::int64_t>(c.state().blocks.size());
              })
      .action("digest", [](auto& c) {
        std::int64_t bytes = 0;
        bool intact = true;
        const auto& blocks = c.state().blocks;
        for (std::size_t i = 0; i < blocks.size(); ++i) {
          bytes += static_cast<std::int64_t>(blocks[i].size());
          intact = intact && blocks[i] == ballast_block(i, blocks[i].size());
        }
        return rivetkit::Value::object({{"blocks", static_cast<std::int64_t>(blocks.size())},
                                        {"bytes", bytes},
                                        {"intact", intact}});
      });
}

}  // namespace fixture

int main(int argc, char** argv) {
  rivetkit::Registry registry;
  registry.add(fixture::counter());
  registry.add(fixture::guarded());
  registry.add(fixture::with_input());
  registry.add(fixture::lifecycle());
  registry.add(fixture::sleepy());
  registry.add(fixture::looper());
  registry.add(fixture::sleepy_raw());
  registry.add(fixture::observer());
  registry.add(fixture::relay());
  registry.add(fixture::gate());
  registry.add(fixture::room());
  registry.add(fixture::watcher());
  registry.add(fixture::queue_worker());
  registry.add(fixture::ballast());
  return registry.run(argc, argv);
}
