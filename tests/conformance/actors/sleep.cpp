// sleep.ts: what keeps an actor awake (actions, raw requests, raw sockets and their async
// handlers, alarms, noSleep), waitUntil/keepAwake, and what onSleep can still do.

#include "actors/request_view.hpp"
#include "fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fixture {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kSleepTimeout{1000};
constexpr std::chrono::milliseconds kRawWsHandlerSleepTimeout{100};
constexpr std::chrono::milliseconds kRawWsHandlerDelay{250};

rivetkit::ActorOptions sleep_options(std::chrono::milliseconds timeout = kSleepTimeout) {
  rivetkit::ActorOptions options;
  options.sleep_timeout = timeout;
  return options;
}

struct SleepCounts {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
};
RIVETKIT_FIELDS(SleepCounts, startCount, sleepCount)

template <class State>
rivetkit::Value counts_of(const State& s) {
  return rivetkit::Value::object({{"startCount", s.startCount}, {"sleepCount", s.sleepCount}});
}

// ---- sleep ----------------------------------------------------------------------------------

rivetkit::ActorDefinition sleep_actor() {
  return rivetkit::actor<SleepCounts>("sleep")
      .options(sleep_options())
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("getCounts", [](auto& c) { return counts_of(std::as_const(c).state()); })
      .action("setAlarm",
              [](auto& c, std::int64_t duration_ms) {
                c.schedule().after(std::chrono::milliseconds(duration_ms), "onAlarm");
              })
      .action("onAlarm", [](auto&) {
        // The TS fixture only logs here.
      });
}

// ---- sleepWithLongRpc -----------------------------------------------------------------------

struct LongRpcVars {
  // Resolved (cancelled) by finishLongRunningRpc; the long RPC waits on it.
  std::shared_ptr<boost::asio::steady_timer> long_running;
};

using LongRpcTypes = rivetkit::ActorTypes<SleepCounts, rivetkit::Value, LongRpcVars>;

rivetkit::ActorDefinition sleep_with_long_rpc() {
  return rivetkit::actor<LongRpcTypes>("sleepWithLongRpc")
      .options(sleep_options())
      .create_vars([](auto&) { return LongRpcVars{}; })
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .action("getCounts", [](auto& c) { return counts_of(std::as_const(c).state()); })
      .action("longRunningRpc",
              [](auto& c) -> rivetkit::Task<void> {
                auto latch = std::make_shared<boost::asio::steady_timer>(
                    c.executor(), boost::asio::steady_timer::time_point::max());
                c.vars().long_running = latch;
                c.broadcast("waiting");
                co_await latch->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
              })
      .action("finishLongRunningRpc", [](auto& c) {
        if (c.vars().long_running) {
          c.vars().long_running->cancel();
        }
      });
}

// ---- sleepWithWaitUntilMessage ----------------------------------------------------------------

struct WaitUntilMessageState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t waitUntilMessageCount = 0;
};
RIVETKIT_FIELDS(WaitUntilMessageState, startCount, sleepCount, waitUntilMessageCount)

template <class Ctx, class Conn>
rivetkit::Task<void> send_sleeping_later(Ctx c, Conn conn) {
  co_await c.wait(10ms);
  c.state().waitUntilMessageCount += 1;
  conn.send("sleeping", rivetkit::Value::object({{"sleepCount", c.state().sleepCount},
                                                 {"startCount", c.state().startCount}}));
}

rivetkit::ActorDefinition sleep_with_wait_until_message() {
  return rivetkit::actor<WaitUntilMessageState>("sleepWithWaitUntilMessage")
      .options(sleep_options())
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .action("triggerSleep",
              [](auto& c) {
                c.wait_until(send_sleeping_later(c, c.conn()));
                c.sleep();
              })
      .action("getCounts", [](auto& c) {
        const auto& s = std::as_const(c).state();
        return rivetkit::Value::object({{"startCount", s.startCount},
                                        {"sleepCount", s.sleepCount},
                                        {"waitUntilMessageCount", s.waitUntilMessageCount}});
      });
}

// ---- sleepWithRawHttp -----------------------------------------------------------------------

struct RawHttpSleepState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t requestCount = 0;
};
RIVETKIT_FIELDS(RawHttpSleepState, startCount, sleepCount, requestCount)

std::int64_t int_param(const rivetkit::Value& params,
                       std::string_view name,
                       std::int64_t fallback) {
  const rivetkit::Value* v = params.find(name);
  if (v == nullptr || !v->is_string()) {
    return fallback;
  }
  try {
    return std::stoll(v->as_string());
  } catch (const std::exception&) {
    return fallback;
  }
}

rivetkit::ActorDefinition sleep_with_raw_http() {
  return rivetkit::actor<RawHttpSleepState>("sleepWithRawHttp")
      .options(sleep_options())
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .on_request([](auto& c, rivetkit::Request req) -> rivetkit::Task<rivetkit::Response> {
        c.state().requestCount += 1;
        if (req.path == "/long-request") {
          const std::int64_t duration = int_param(search_params(req.search), "duration", 1000);
          co_await c.wait(std::chrono::milliseconds(duration));
          co_return rivetkit::Response::json(json(rivetkit::Value::object({{"completed", true}})));
        }
        co_return rivetkit::Response(404, "Not Found");
      })
      .action("getCounts", [](auto& c) {
        const auto& s = std::as_const(c).state();
        return rivetkit::Value::object({{"startCount", s.startCount},
                                        {"sleepCount", s.sleepCount},
                                        {"requestCount", s.requestCount}});
      });
}

// ---- sleepWithRawWebSocket ----------------------------------------------------------------------

struct RawWsSleepState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t connectionCount = 0;
};
RIVETKIT_FIELDS(RawWsSleepState, startCount, sleepCount, connectionCount)

template <class Ctx>
void on_counts_message(Ctx c,
                       const rivetkit::WebSocket& ws,
                       const rivetkit::WebSocketMessage& msg) {
  if (msg.binary) {
    return;
  }
  auto parsed = parse(msg.data);
  if (!parsed) {
    ws.send(msg.data);
    return;
  }
  const std::string type = type_of(*parsed);
  if (type == "getCounts") {
    const auto& s = std::as_const(c).state();
    ws.send(json(rivetkit::Value::object({{"type", "counts"},
                                          {"startCount", s.startCount},
                                          {"sleepCount", s.sleepCount},
                                          {"connectionCount", s.connectionCount}})));
  } else if (type == "keepAlive") {
    ws.send(json(rivetkit::Value::object({{"type", "ack"}})));
  }
}

rivetkit::ActorDefinition sleep_with_raw_websocket() {
  return rivetkit::actor<RawWsSleepState>("sleepWithRawWebSocket")
      .options(sleep_options())
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        c.state().connectionCount += 1;
        ws.send(json(rivetkit::Value::object(
            {{"type", "connected"}, {"connectionCount", c.state().connectionCount}})));
        ws.on_message([c, ws](rivetkit::WebSocketMessage msg) { on_counts_message(c, ws, msg); });
        ws.on_close(
            [c](std::uint16_t, const std::string&) mutable { c.state().connectionCount -= 1; });
      })
      .action("getCounts", [](auto& c) {
        const auto& s = std::as_const(c).state();
        return rivetkit::Value::object({{"startCount", s.startCount},
                                        {"sleepCount", s.sleepCount},
                                        {"connectionCount", s.connectionCount}});
      });
}

// ---- sleepRawWs{AddEventListener,On}{Message,Close}
// -----------------------------------------------

struct AsyncRawWsState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t messageStarted = 0;
  std::int64_t messageFinished = 0;
  std::int64_t closeStarted = 0;
  std::int64_t closeFinished = 0;
};
RIVETKIT_FIELDS(AsyncRawWsState,
                startCount,
                sleepCount,
                messageStarted,
                messageFinished,
                closeStarted,
                closeFinished)

struct AsyncRawWsVars {
  std::optional<rivetkit::WebSocket> websocket;
};

using AsyncRawWsTypes = rivetkit::ActorTypes<AsyncRawWsState, rivetkit::Value, AsyncRawWsVars>;

enum class WsEvent { kMessage, kClose };

template <class Ctx>
rivetkit::Task<void> track_message(Ctx c, rivetkit::WebSocket ws, rivetkit::WebSocketMessage msg) {
  if (msg.binary || msg.data != "track-message") {
    co_return;
  }
  c.state().messageStarted += 1;
  ws.send(json(rivetkit::Value::object({{"type", "message-started"}})));
  co_await c.wait(kRawWsHandlerDelay);
  c.state().messageFinished += 1;
}

template <class Ctx>
rivetkit::Task<void> finish_close(Ctx c) {
  co_await c.wait(kRawWsHandlerDelay);
  c.state().closeFinished += 1;
}

/// The TS fixture registers its handlers either with addEventListener or as the onmessage /
/// onclose property; both are the same registration here, kept as separate actors.
rivetkit::ActorDefinition async_raw_ws_sleep_actor(std::string name, WsEvent event) {
  return rivetkit::actor<AsyncRawWsTypes>(std::move(name))
      .options(sleep_options(kRawWsHandlerSleepTimeout))
      .create_vars([](auto&) { return AsyncRawWsVars{}; })
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .on_websocket([event](auto& c, rivetkit::WebSocket ws) {
        c.vars().websocket = ws;
        if (event == WsEvent::kMessage) {
          ws.on_message([c, ws](rivetkit::WebSocketMessage msg) {
            return track_message(c, ws, std::move(msg));
          });
        } else {
          // An async close handler: the runtime keeps the actor awake until it finishes.
          ws.on_close([c](std::uint16_t, std::string) mutable -> rivetkit::Task<void> {
            c.state().closeStarted += 1;
            return finish_close(c);
          });
        }
        ws.send(json(rivetkit::Value::object({{"type", "connected"}})));
      })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
}

// ---- sleepRawWsSendOnSleep / sleepRawWsDelayedSendOnSleep ---------------------------------------

struct OpenSocket {
  std::string conn_id;
  rivetkit::WebSocket ws;
};

struct OpenSocketsVars {
  std::vector<OpenSocket> websockets;
};

using SendOnSleepTypes = rivetkit::ActorTypes<SleepCounts, rivetkit::Value, OpenSocketsVars>;

template <class Ctx>
void send_sleeping(Ctx& c) {
  const std::string text =
      json(rivetkit::Value::object({{"type", "sleeping"}, {"sleepCount", c.state().sleepCount}}));
  for (const auto& open : c.vars().websockets) {
    open.ws.send(text);
  }
}

rivetkit::ActorDefinition send_on_sleep_actor(std::string name, bool delayed) {
  auto builder = rivetkit::actor<SendOnSleepTypes>(std::move(name));
  builder.options(sleep_options())
      .create_vars([](auto&) { return OpenSocketsVars{}; })
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        const std::string conn_id = c.conn().id();
        c.vars().websockets.push_back(OpenSocket{conn_id, ws});
        ws.send(json(rivetkit::Value::object({{"type", "connected"}})));
        ws.on_close([c, conn_id](std::uint16_t, const std::string&) mutable {
          auto& open = c.vars().websockets;
          open.erase(std::remove_if(open.begin(), open.end(),
                                    [&](const OpenSocket& s) { return s.conn_id == conn_id; }),
                     open.end());
        });
      })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("getCounts", [](auto& c) { return counts_of(std::as_const(c).state()); });
  if (delayed) {
    builder.on_sleep([](auto& c) -> rivetkit::Task<void> {
      c.state().sleepCount += 1;
      co_await c.wait(100ms);
      send_sleeping(c);
      co_await c.wait(100ms);
    });
  } else {
    builder.on_sleep([](auto& c) {
      c.state().sleepCount += 1;
      send_sleeping(c);
    });
  }
  return builder;
}

// ---- sleepWithWaitUntilInOnWake
// -------------------------------------------------------------------

struct WaitUntilInOnWakeState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  bool waitUntilCalled = false;
  bool waitUntilCompleted = false;
};
RIVETKIT_FIELDS(WaitUntilInOnWakeState, startCount, sleepCount, waitUntilCalled, waitUntilCompleted)

template <class Ctx>
rivetkit::Task<void> complete_wait_until(Ctx c) {
  c.state().waitUntilCompleted = true;
  co_return;
}

rivetkit::ActorDefinition sleep_with_wait_until_in_on_wake() {
  return rivetkit::actor<WaitUntilInOnWakeState>("sleepWithWaitUntilInOnWake")
      .options(sleep_options())
      .on_wake([](auto& c) {
        c.state().startCount += 1;
        c.wait_until(complete_wait_until(c));  // must be allowed during onWake
        c.state().waitUntilCalled = true;
      })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
}

// ---- counterWaitUntilProbe
// ------------------------------------------------------------------------

struct ProbeState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(ProbeState, count)

rivetkit::Task<void> resolved() {
  co_return;
}

rivetkit::Task<rivetkit::Value> resolved_with_value() {
  co_return rivetkit::Value::object({{"ok", true}});
}

rivetkit::Task<void> rejected() {
  throw std::runtime_error("reject-with-error-ok");
  co_return;
}

rivetkit::ActorDefinition counter_wait_until_probe() {
  return rivetkit::actor<ProbeState>("counterWaitUntilProbe")
      .options(sleep_options())
      .action("triggerWaitUntilVoid",
              [](auto& c) {
                c.state().count += 1;
                c.wait_until(resolved());
                return c.state().count;
              })
      .action("triggerWaitUntilWithValue",
              [](auto& c) {
                c.state().count += 1;
                c.wait_until(resolved_with_value());
                return c.state().count;
              })
      .action("triggerWaitUntilRejectVoid",
              [](auto& c) {
                c.state().count += 1;
                c.wait_until(rejected());  // a failing waitUntil must not fail the action
                return c.state().count;
              })
      .action("triggerKeepAwakeVoid",
              [](auto& c) -> rivetkit::Task<std::int64_t> {
                c.state().count += 1;
                co_await c.keep_awake(resolved()).result();
                co_return c.state().count;
              })
      .action("triggerKeepAwakeWithValue",
              [](auto& c) -> rivetkit::Task<std::int64_t> {
                c.state().count += 1;
                rivetkit::Value value = co_await c.keep_awake(resolved_with_value()).result();
                (void)value;
                co_return c.state().count;
              })
      .action("getCount", [](auto& c) { return std::as_const(c).state().count; });
}

// ---- sleepAbortListenerVarsActor
// ------------------------------------------------------------------

struct AbortListenerVarsState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  // Per wake (1-based startCount): what the abort listener saw of vars ("unset", "object").
  std::vector<std::string> abortVarsSeenPerWake;
};
RIVETKIT_FIELDS(AbortListenerVarsState, startCount, sleepCount, abortVarsSeenPerWake)

struct StoppingVars {
  bool isStopping = false;
};

using AbortListenerVarsTypes =
    rivetkit::ActorTypes<AbortListenerVarsState, rivetkit::Value, StoppingVars>;

rivetkit::ActorDefinition sleep_abort_listener_vars_actor() {
  return rivetkit::actor<AbortListenerVarsTypes>("sleepAbortListenerVarsActor")
      .options(sleep_options())
      .create_vars([](auto&) { return StoppingVars{}; })
      .on_wake([](auto& c) {
        c.state().startCount += 1;
        const auto wake_index = static_cast<std::size_t>(c.state().startCount);
        c.vars().isStopping = c.aborted();
        auto& seen = c.state().abortVarsSeenPerWake;
        if (seen.size() < wake_index) {
          seen.resize(wake_index);
        }
        seen[wake_index - 1] = "unset";
        if (c.aborted()) {
          return;
        }
        c.abort_signal().on_abort([c, wake_index]() mutable {
          // vars is a C++ member of the running instance: it is always an object here.
          c.vars().isStopping = true;
          c.state().abortVarsSeenPerWake[wake_index - 1] = "object";
        });
      })
      .on_sleep([](auto& c) -> rivetkit::Task<void> {
        c.state().sleepCount += 1;
        for (int i = 0; i < 5; ++i) {
          co_await c.wait(0ms);  // a few macrotasks
        }
      })
      .on_websocket([](auto&, rivetkit::WebSocket ws) {
        ws.send(json(rivetkit::Value::object({{"type", "connected"}})));
      })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
}

// ---- sleepWithNoSleepOption ---------------------------------------------------------------------

rivetkit::ActorDefinition sleep_with_no_sleep_option() {
  auto options = sleep_options();
  options.no_sleep = true;
  return rivetkit::actor<SleepCounts>("sleepWithNoSleepOption")
      .options(options)
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .action("getCounts", [](auto& c) { return counts_of(std::as_const(c).state()); });
}

// ---- sleepWaitUntilVarsDuringGrace
// ----------------------------------------------------------------

struct WaitUntilGraceState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t waitUntilStarted = 0;
};
RIVETKIT_FIELDS(WaitUntilGraceState, startCount, sleepCount, waitUntilStarted)

struct DirtyVars {
  bool dirty = false;
};

using WaitUntilGraceTypes = rivetkit::ActorTypes<WaitUntilGraceState, rivetkit::Value, DirtyVars>;

template <class Ctx>
rivetkit::Task<void> dirty_vars_later(Ctx c) {
  c.state().waitUntilStarted += 1;
  co_await c.wait(150ms);
  c.vars().dirty = true;
}

rivetkit::ActorDefinition sleep_wait_until_vars_during_grace() {
  auto options = sleep_options(100ms);
  options.sleep_grace_period = 1000ms;
  return rivetkit::actor<WaitUntilGraceTypes>("sleepWaitUntilVarsDuringGrace")
      .options(options)
      .create_vars([](auto&) { return DirtyVars{}; })
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) {
        c.state().sleepCount += 1;
        c.wait_until(dirty_vars_later(c));
      })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
}

// ---- sleepRawWsVarsExceedsGrace
// -------------------------------------------------------------------

struct VarsExceedsGraceState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t handlerStarted = 0;
  std::int64_t handlerFinished = 0;
};
RIVETKIT_FIELDS(VarsExceedsGraceState, startCount, sleepCount, handlerStarted, handlerFinished)

using VarsExceedsGraceTypes =
    rivetkit::ActorTypes<VarsExceedsGraceState, rivetkit::Value, DirtyVars>;

template <class Ctx>
rivetkit::Task<void> slow_vars_work(Ctx c, rivetkit::WebSocket ws, rivetkit::WebSocketMessage msg) {
  if (msg.binary || msg.data != "slow-vars-work") {
    co_return;
  }
  c.state().handlerStarted += 1;
  ws.send(json(rivetkit::Value::object({{"type", "started"}})));
  // Longer than the grace period: the actor is stopping (or stopped) when this resumes.
  co_await c.wait(2000ms);
  c.vars().dirty = true;
  c.state().handlerFinished += 1;
}

rivetkit::ActorDefinition sleep_raw_ws_vars_exceeds_grace() {
  auto options = sleep_options(100ms);
  options.sleep_grace_period = 200ms;
  return rivetkit::actor<VarsExceedsGraceTypes>("sleepRawWsVarsExceedsGrace")
      .options(options)
      .create_vars([](auto&) { return DirtyVars{}; })
      .on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        ws.on_message([c, ws](rivetkit::WebSocketMessage msg) {
          return slow_vars_work(c, ws, std::move(msg));
        });
        ws.send(json(rivetkit::Value::object({{"type", "connected"}})));
      })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
}

}  // namespace

void add_sleep_actors(rivetkit::Registry& registry) {
  registry.add(sleep_actor());
  registry.add(sleep_with_long_rpc());
  registry.add(sleep_with_raw_http());
  registry.add(sleep_with_raw_websocket());
  registry.add(sleep_with_no_sleep_option());
  registry.add(sleep_with_wait_until_message());
  registry.add(async_raw_ws_sleep_actor("sleepRawWsAddEventListenerMessage", WsEvent::kMessage));
  registry.add(async_raw_ws_sleep_actor("sleepRawWsAddEventListenerClose", WsEvent::kClose));
  registry.add(async_raw_ws_sleep_actor("sleepRawWsOnMessage", WsEvent::kMessage));
  registry.add(async_raw_ws_sleep_actor("sleepRawWsOnClose", WsEvent::kClose));
  registry.add(send_on_sleep_actor("sleepRawWsSendOnSleep", false));
  registry.add(send_on_sleep_actor("sleepRawWsDelayedSendOnSleep", true));
  registry.add(sleep_with_wait_until_in_on_wake());
  registry.add(sleep_abort_listener_vars_actor());
  registry.add(sleep_wait_until_vars_during_grace());
  registry.add(sleep_raw_ws_vars_exceeds_grace());
  registry.add(counter_wait_until_probe());
}

}  // namespace fixture
