// The actor router's route table: which surface a path inside an actor reaches, and what the
// surface's handler sees of the path.

#include "core/router/route_table.hpp"

#include <gtest/gtest.h>

namespace rivetkit::core::router {
namespace {

TEST(RouteTableTest, HttpPathsReachTheirSurfaces) {
  auto action = route_http("POST", "/action/increment?x=1");
  EXPECT_EQ(action.surface, Surface::kHttpAction);
  EXPECT_EQ(action.rest, "increment");
  EXPECT_EQ(action.search, "?x=1");
  EXPECT_EQ(route_http("GET", "/action/a%20b").rest, "a%20b") << "decoded by the surface";

  auto queue = route_http("POST", "/queue/jobs%2Fnight?x=1");
  EXPECT_EQ(queue.surface, Surface::kQueueSend);
  EXPECT_EQ(queue.rest, "jobs%2Fnight") << "decoded by the surface";
  EXPECT_EQ(route_http("GET", "/queue/jobs").surface, Surface::kQueueSend) << "answered 405";
  EXPECT_EQ(route_http("POST", "/queue").surface, Surface::kNotFound);

  auto raw = route_http("PUT", "/request/items/7?full=1");
  EXPECT_EQ(raw.surface, Surface::kRawHttp);
  EXPECT_EQ(raw.rest, "/items/7");
  EXPECT_EQ(raw.search, "?full=1");
  EXPECT_EQ(route_http("GET", "/request").rest, "/");
  EXPECT_EQ(route_http("GET", "/request/").rest, "/");
  EXPECT_EQ(route_http("GET", "/requests").surface, Surface::kNotFound);

  auto inspector = route_http("PATCH", "/inspector/state?x=1");
  EXPECT_EQ(inspector.surface, Surface::kInspector);
  EXPECT_EQ(inspector.rest, "/state");
  EXPECT_EQ(inspector.search, "?x=1");
  EXPECT_EQ(route_http("POST", "/inspector/action/a%20b").rest, "/action/a%20b");
  EXPECT_EQ(route_http("GET", "/inspector").surface, Surface::kNotFound);

  EXPECT_EQ(route_http("GET", "/metadata").surface, Surface::kMetadata);
  EXPECT_EQ(route_http("GET", "/health").surface, Surface::kHealth);
  EXPECT_EQ(route_http("GET", "/").surface, Surface::kBanner);
  EXPECT_EQ(route_http("POST", "/health").surface, Surface::kNotFound);
  auto unknown = route_http("GET", "/nothing?q");
  EXPECT_EQ(unknown.surface, Surface::kNotFound);
  EXPECT_EQ(unknown.path, "/nothing");
}

TEST(RouteTableTest, WebSocketPathsReachTheirSurfaces) {
  auto connect = route_websocket("/connect?x=1");
  EXPECT_EQ(connect.surface, Surface::kConnect);
  EXPECT_EQ(connect.search, "?x=1");

  auto inspector = route_websocket("/inspector/connect?protocol_version=6");
  EXPECT_EQ(inspector.surface, Surface::kInspectorConnect);
  EXPECT_EQ(inspector.search, "?protocol_version=6");
  EXPECT_EQ(route_websocket("/inspector/other").surface, Surface::kRawWebSocket);

  auto raw = route_websocket("/websocket/chat?room=2");
  EXPECT_EQ(raw.surface, Surface::kRawWebSocket);
  EXPECT_EQ(raw.rest, "/chat");
  EXPECT_EQ(raw.search, "?room=2");
  EXPECT_EQ(route_websocket("/websocket").rest, "/");
  EXPECT_EQ(route_websocket("/other/path").rest, "/other/path") << "any path but /connect";
  EXPECT_EQ(route_websocket("/connect/x").surface, Surface::kRawWebSocket);
  EXPECT_EQ(route_websocket("").rest, "/");
}

}  // namespace
}  // namespace rivetkit::core::router
