// access-control.ts: event subscriptions gated by canSubscribe, queue sends gated by canPublish
// (allowedQueue, blockedQueue; an actor without queues takes nothing), raw HTTP and raw WebSocket
// gated in onBeforeConnect.

#include "fixture.hpp"

#include <optional>
#include <string>

namespace fixture {
namespace {

struct AccessControlState {
  std::optional<std::string> lastCanPublishConnId;
  std::optional<std::string> lastCanSubscribeConnId;
};
RIVETKIT_FIELDS(AccessControlState, lastCanPublishConnId, lastCanSubscribeConnId)

struct AccessControlParams {
  std::optional<bool> allowRequest;
  std::optional<bool> allowWebSocket;
};
RIVETKIT_FIELDS(AccessControlParams, allowRequest, allowWebSocket)

using AccessControlTypes =
    rivetkit::ActorTypes<AccessControlState, rivetkit::Value, rivetkit::Empty, AccessControlParams>;

rivetkit::ActorError forbidden() {
  return rivetkit::ActorError(rivetkit::Error{"auth", "forbidden", "Forbidden", {}, true});
}

rivetkit::Value payload(std::string value) {
  return rivetkit::Value::object({{"value", std::move(value)}});
}

rivetkit::ActorDefinition access_control_actor() {
  return rivetkit::actor<AccessControlTypes>("accessControlActor")
      .event("allowedEvent",
             [](auto& c) {
               c.state().lastCanSubscribeConnId = c.conn().id();
               return true;
             })
      .event("blockedEvent",
             [](auto& c) {
               c.state().lastCanSubscribeConnId = c.conn().id();
               return false;
             })
      .queue("allowedQueue",
             [](auto& c) {
               c.state().lastCanPublishConnId = c.conn().id();
               return true;
             })
      .queue("blockedQueue",
             [](auto& c) {
               c.state().lastCanPublishConnId = c.conn().id();
               return false;
             })
      .on_before_connect([](auto&, const AccessControlParams& params) {
        if (params.allowRequest == false || params.allowWebSocket == false) {
          throw forbidden();
        }
      })
      .on_request([](auto&, const rivetkit::Request& req) {
        if (req.path == "/status") {
          return rivetkit::Response::json(R"({"ok":true})");
        }
        return rivetkit::Response(404, "Not Found");
      })
      .on_websocket([](auto&, rivetkit::WebSocket ws) { ws.send(R"({"type":"welcome"})"); })
      .action("allowedAction", [](auto&, std::string value) { return "allowed:" + value; })
      .action("allowedGetLastCanPublishConnId",
              [](auto& c) { return std::as_const(c).state().lastCanPublishConnId; })
      .action("allowedGetLastCanSubscribeConnId",
              [](auto& c) { return std::as_const(c).state().lastCanSubscribeConnId; })
      .action("allowedReceiveQueue",
              [](auto& c) -> rivetkit::Task<rivetkit::Value> {
                rivetkit::QueueReceive r;
                r.names = {"allowedQueue"};
                auto op = c.queue().try_next(std::move(r));
                auto m = co_await std::move(op);
                co_return m ? m->body() : rivetkit::Value(nullptr);
              })
      .action("allowedReceiveAnyQueue",
              [](auto& c) -> rivetkit::Task<rivetkit::Value> {
                auto op = c.queue().try_next();
                auto m = co_await std::move(op);
                co_return m ? m->body() : rivetkit::Value(nullptr);
              })
      .action("allowedBroadcastAllowedEvent",
              [](auto& c, std::string value) {
                c.broadcast("allowedEvent", payload(std::move(value)));
                return true;
              })
      .action("allowedBroadcastBlockedEvent",
              [](auto& c, std::string value) {
                c.broadcast("blockedEvent", payload(std::move(value)));
                return true;
              })
      .action("allowedBroadcastUndefinedEvent", [](auto& c, std::string value) {
        c.broadcast("undefinedEvent", payload(std::move(value)));
        return true;
      });
}

// No queues declared: every send is accepted and dropped.
rivetkit::ActorDefinition access_control_no_queues_actor() {
  return rivetkit::actor("accessControlNoQueuesActor")
      .action("readAnyQueue", [](auto& c) -> rivetkit::Task<rivetkit::Value> {
        auto op = c.queue().try_next();
        auto m = co_await std::move(op);
        co_return m ? m->body() : rivetkit::Value(nullptr);
      });
}

}  // namespace

void add_access_control_actors(rivetkit::Registry& registry) {
  registry.add(access_control_actor());
  registry.add(access_control_no_queues_actor());
}

}  // namespace fixture
