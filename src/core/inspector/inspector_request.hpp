#pragma once
// What an inspector client asks of one actor (core-semantics.md §9), decoded from HTTP
// (core/router/inspector_http.cpp) or the inspector WebSocket (inspector_websocket.cpp), and
// answered by
// core/inspector/inspector.hpp on the actor's strand.

#include "core/inspector/inspector_watchers.hpp"
#include "net/websocket.hpp"
#include <rivetkit/http.hpp>
#include <rivetkit/sql_types.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace rivetkit::core::inspector {

struct GetState {};
/// Replaces the state, saved at once: answered once durable.
struct PatchState {
  Value state;
};
struct GetConnections {};
struct GetRpcs {};
/// Runs an action on a short-lived connection, as an HTTP action does.
struct RunAction {
  std::string name;
  Array args;
  Request request;
};
/// The first `limit` waiting messages of the queue.
struct GetQueue {
  std::size_t limit = 100;
};
/// Adds a message to the queue (any name but ""): answered once durable.
struct SendQueue {
  std::string name;
  Value body;
};
/// Deletes every waiting message: answered once durable.
struct ResetQueue {};
struct GetTraces {};
/// `transport`: answer the history as the WebSocket carries it ({historyTransport: bytes}).
struct GetWorkflowHistory {
  bool transport = false;
};
struct ReplayWorkflow {
  std::optional<std::string> entry_id;
  bool transport = false;
};
struct GetDatabaseSchema {};
/// Rows of `table`, at most 500 (`limit` is clamped), from `offset`.
struct GetDatabaseRows {
  std::string table;
  std::int64_t limit = 100;
  std::int64_t offset = 0;
};
struct ExecuteSql {
  std::string sql;
  SqlParams params;
};
struct GetSummary {};
/// The actor's schedules: [{id, action, args, atMs, attempts}].
struct GetSchedules {};
/// Cancels schedule `id`: {deleted}.
struct DeleteSchedule {
  std::string id;
};
/// Attaches an inspector WebSocket (InspectorWatchers): it gets Init, then the live pushes.
struct AttachSocket {
  std::shared_ptr<net::WebSocket> socket;
  InspectorWatchers::Wire wire;
};

using InspectorRequest = std::variant<GetState,
                                      PatchState,
                                      GetConnections,
                                      GetRpcs,
                                      RunAction,
                                      GetQueue,
                                      SendQueue,
                                      ResetQueue,
                                      GetTraces,
                                      GetWorkflowHistory,
                                      ReplayWorkflow,
                                      GetDatabaseSchema,
                                      GetDatabaseRows,
                                      ExecuteSql,
                                      GetSummary,
                                      GetSchedules,
                                      DeleteSchedule,
                                      AttachSocket>;

}  // namespace rivetkit::core::inspector
