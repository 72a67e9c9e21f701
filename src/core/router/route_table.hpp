#pragma once
// The route table: which surface a path inside the actor reaches (client-protocol.md §6). Pure
// functions of the method and the path, so the table is tested without sockets.

#include <string>
#include <string_view>

namespace rivetkit::core::router {

enum class Surface {
  kHttpAction,        // POST /action/{name}
  kQueueSend,         // POST /queue/{name}
  kRawHttp,           // ANY /request[/...]
  kInspector,         // ANY /inspector/...
  kMetadata,          // GET /metadata
  kHealth,            // GET /health
  kBanner,            // GET /
  kConnect,           // WS /connect
  kInspectorConnect,  // WS /inspector/connect
  kRawWebSocket,      // WS /websocket[/...] and any other WebSocket path
  kNotFound,
};

struct Route {
  Surface surface = Surface::kNotFound;
  /// The path without its query.
  std::string path;
  /// The action name as sent (still percent-encoded), or the path the user's handler sees
  /// (raw HTTP and raw WebSocket: the surface prefix removed, "/" at least).
  std::string rest;
  /// The query with its "?", or "".
  std::string search;
};

Route route_http(std::string_view method, std::string_view target);
Route route_websocket(std::string_view target);

}  // namespace rivetkit::core::router
