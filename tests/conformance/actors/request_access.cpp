// request-access.ts: records the request each hook sees (onBeforeConnect, createConnState,
// onRequest, onWebSocket).

#include "actors/request_view.hpp"
#include "fixture.hpp"

#include <map>
#include <optional>
#include <string>

namespace fixture {
namespace {

struct RequestInfo {
  bool hasRequest = false;
  std::optional<std::string> requestUrl;
  std::optional<std::string> requestMethod;
  std::map<std::string, std::string> requestHeaders;
};
RIVETKIT_FIELDS(RequestInfo, hasRequest, requestUrl, requestMethod, requestHeaders)

struct RequestAccessState {
  RequestInfo onBeforeConnectRequest;
  RequestInfo createConnStateRequest;
  RequestInfo onRequestRequest;
  RequestInfo onWebSocketRequest;
};
RIVETKIT_FIELDS(RequestAccessState,
                onBeforeConnectRequest,
                createConnStateRequest,
                onRequestRequest,
                onWebSocketRequest)

struct RequestAccessParams {
  std::optional<bool> trackRequest;
};
RIVETKIT_FIELDS(RequestAccessParams, trackRequest)

struct RequestAccessConnState {
  bool trackRequest = false;
  std::optional<RequestInfo> requestInfo;
};
RIVETKIT_FIELDS(RequestAccessConnState, trackRequest, requestInfo)

using RequestAccessTypes = rivetkit::
    ActorTypes<RequestAccessState, RequestAccessConnState, rivetkit::Empty, RequestAccessParams>;

RequestInfo info_of(const rivetkit::Request& req) {
  RequestInfo info;
  info.hasRequest = true;
  info.requestUrl = request_url(req);
  info.requestMethod = req.method;
  // headers_object already joins repeated headers the way Headers.forEach does.
  const rivetkit::Value headers = headers_object(req);
  for (const auto& m : headers.as_object()) {
    info.requestHeaders[m.key] = m.value.as_string();
  }
  return info;
}

rivetkit::ActorDefinition request_access_actor() {
  return rivetkit::actor<RequestAccessTypes>("requestAccessActor")
      .create_conn_state(
          [](auto&, const RequestAccessParams& params, const rivetkit::Request& req) {
            RequestAccessConnState state;
            state.trackRequest = params.trackRequest.value_or(false);
            if (state.trackRequest) {
              state.requestInfo = info_of(req);
            }
            return state;
          })
      .on_connect([](auto& c, auto conn) {
        if (conn.state().requestInfo) {
          c.state().createConnStateRequest = *conn.state().requestInfo;
        }
      })
      .on_before_connect(
          [](auto& c, const RequestAccessParams& params, const rivetkit::Request& req) {
            if (params.trackRequest.value_or(false)) {
              // Every connection (and every stateless HTTP action) comes with its request here.
              c.state().onBeforeConnectRequest = info_of(req);
            }
          })
      .on_request([](auto& c, const rivetkit::Request& req) {
        RequestInfo info = info_of(req);
        c.state().onRequestRequest = info;
        return rivetkit::Response::json(json(rivetkit::to_value(info)));
      })
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        RequestInfo info = info_of(ws.request());
        c.state().onWebSocketRequest = info;
        ws.send(json(rivetkit::to_value(info)));
        ws.on_message([ws](rivetkit::WebSocketMessage msg) {
          if (msg.binary) {
            ws.send_binary(msg.data);
          } else {
            ws.send(msg.data);
          }
        });
      })
      .action("ping", [](auto&) { return std::string("pong"); })
      .action("getRequestInfo", [](auto& c) {
        const auto& s = std::as_const(c).state();
        return rivetkit::Value::object(
            {{"onBeforeConnect", rivetkit::to_value(s.onBeforeConnectRequest)},
             {"createConnState", rivetkit::to_value(s.createConnStateRequest)},
             {"onRequest", rivetkit::to_value(s.onRequestRequest)},
             {"onWebSocket", rivetkit::to_value(s.onWebSocketRequest)}});
      });
}

}  // namespace

void add_request_access_actors(rivetkit::Registry& registry) {
  registry.add(request_access_actor());
}

}  // namespace fixture
