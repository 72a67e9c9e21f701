// raw-websocket.ts: raw WebSocket open/echo/stats/request info/indexed messages, binary echo,
// an asynchronous open handler, and the connection behind a raw socket.

#include "actors/request_view.hpp"
#include "fixture.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fixture {
namespace {

using namespace std::chrono_literals;

struct RawWebSocketState {
  std::int64_t connectionCount = 0;
  std::int64_t messageCount = 0;
  std::vector<rivetkit::Value> indexedMessageOrder;  // numbers, or null when unknown
};
RIVETKIT_FIELDS(RawWebSocketState, connectionCount, messageCount, indexedMessageOrder)

/// Asks for sleep `delay` from now without holding the current handler (TS: setTimeout).
template <class Ctx>
rivetkit::Task<void> sleep_after(Ctx c, std::chrono::milliseconds delay) {
  co_await c.wait(delay);
  c.sleep();
}

template <class Ctx>
void on_raw_message(Ctx c, const rivetkit::WebSocket& ws, const rivetkit::WebSocketMessage& msg) {
  c.state().messageCount += 1;
  if (msg.binary) {
    ws.send_binary(msg.data);
    return;
  }
  auto parsed = parse(msg.data);
  if (!parsed) {
    ws.send(msg.data);
    return;
  }
  const std::string type = type_of(*parsed);
  // rivetMessageIndex: null on sockets that are not hibernatable, as in the TS fixture.
  const rivetkit::Value message_index =
      msg.index ? rivetkit::Value(static_cast<std::int64_t>(*msg.index)) : rivetkit::Value(nullptr);
  if (type == "ping") {
    ws.send(json(rivetkit::Value::object({{"type", "pong"}, {"timestamp", now_ms()}})));
  } else if (type == "getStats") {
    const auto& s = std::as_const(c).state();
    ws.send(json(rivetkit::Value::object({{"type", "stats"},
                                          {"connectionCount", s.connectionCount},
                                          {"messageCount", s.messageCount}})));
  } else if (type == "getRequestInfo") {
    const rivetkit::Request& req = ws.request();
    ws.send(json(rivetkit::Value::object({{"type", "requestInfo"},
                                          {"url", request_url(req)},
                                          {"pathname", req.path},
                                          {"search", req.search}})));
  } else if (type == "indexedEcho") {
    c.state().indexedMessageOrder.push_back(message_index);
    const rivetkit::Value* payload = parsed->find("payload");
    ws.send(json(rivetkit::Value::object(
        {{"type", "indexedEcho"},
         {"payload", payload != nullptr && !payload->is_undefined() ? *payload : rivetkit::Value{}},
         {"rivetMessageIndex", message_index}})));
  } else if (type == "indexedAckProbe") {
    c.state().indexedMessageOrder.push_back(message_index);
    const rivetkit::Value* payload = parsed->find("payload");
    std::int64_t size = 0;
    if (payload != nullptr && payload->is_string()) {
      // JS string length counts UTF-16 code units; the probes send ASCII.
      size = static_cast<std::int64_t>(payload->as_string().size());
    }
    ws.send(json(rivetkit::Value::object({{"type", "indexedAckProbe"},
                                          {"rivetMessageIndex", message_index},
                                          {"payloadSize", size}})));
  } else if (type == "getIndexedMessageOrder") {
    ws.send(json(rivetkit::Value::object(
        {{"type", "indexedMessageOrder"},
         {"order", rivetkit::to_value(std::as_const(c).state().indexedMessageOrder)}})));
  } else if (type == "scheduleSleep") {
    ws.send(json(rivetkit::Value::object({{"type", "sleepScheduled"}})));
    c.wait_until(sleep_after(c, 25ms));
  } else {
    ws.send(msg.data);
  }
}

rivetkit::ActorDefinition raw_websocket_actor() {
  rivetkit::ActorOptions options;
  options.can_hibernate_websocket = [](const rivetkit::Request&) {
    return true;
  };
  options.sleep_timeout = 250ms;
  return rivetkit::actor<RawWebSocketState>("rawWebSocketActor")
      .options(options)
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        // A socket that survived the actor's sleep is the same connection: it was counted and
        // welcomed when it opened, and its close handler has not run.
        if (!ws.restored()) {
          c.state().connectionCount += 1;
          ws.send(json(rivetkit::Value::object(
              {{"type", "welcome"}, {"connectionCount", c.state().connectionCount}})));
        }
        ws.on_message([c, ws](rivetkit::WebSocketMessage msg) { on_raw_message(c, ws, msg); });
        ws.on_close([c](std::uint16_t, std::string) mutable { c.state().connectionCount -= 1; });
      })
      .action("triggerSleep",
              [](auto& c) {
                c.sleep();
                return true;
              })
      .action("getStats", [](auto& c) {
        const auto& s = std::as_const(c).state();
        return rivetkit::Value::object(
            {{"connectionCount", s.connectionCount}, {"messageCount", s.messageCount}});
      });
}

rivetkit::ActorDefinition raw_websocket_binary_actor() {
  return rivetkit::actor<>("rawWebSocketBinaryActor")
      .on_websocket([](auto&, rivetkit::WebSocket ws) {
        ws.on_message([ws](rivetkit::WebSocketMessage msg) {
          if (msg.binary) {
            std::string reversed(msg.data.rbegin(), msg.data.rend());
            ws.send_binary(reversed);
          }
        });
      });
}

struct AsyncOpenState {
  std::int64_t openCount = 0;
};
RIVETKIT_FIELDS(AsyncOpenState, openCount)

rivetkit::ActorDefinition raw_websocket_async_open_actor() {
  rivetkit::ActorOptions options;
  options.can_hibernate_websocket = [](const rivetkit::Request&) {
    return false;
  };
  options.sleep_grace_period = 2000ms;
  return rivetkit::actor<AsyncOpenState>("rawWebSocketAsyncOpenActor")
      .options(options)
      .on_websocket([](auto& c, rivetkit::WebSocket ws) -> rivetkit::Task<void> {
        c.state().openCount += 1;
        co_await c.wait(10ms);
        ws.send(json(
            rivetkit::Value::object({{"type", "async-open"}, {"openCount", c.state().openCount}})));
      })
      .action("getOpenCount", [](auto& c) { return std::as_const(c).state().openCount; });
}

rivetkit::ActorDefinition raw_websocket_conn_context_actor() {
  return rivetkit::actor<>("rawWebSocketConnContextActor")
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        auto conn = c.conn();
        const std::string conn_id = conn.id();
        conn.state() = rivetkit::Value::object({{"opened", true}, {"connId", conn_id}});
        ws.send(json(rivetkit::Value::object(
            {{"type", "conn-context"}, {"connId", conn_id}, {"state", conn.state()}})));
      });
}

}  // namespace

void add_raw_websocket_actors(rivetkit::Registry& registry) {
  registry.add(raw_websocket_actor());
  registry.add(raw_websocket_binary_actor());
  registry.add(raw_websocket_async_open_actor());
  registry.add(raw_websocket_conn_context_actor());
}

}  // namespace fixture
