#pragma once
// The inspector of one actor (core-semantics.md §9, docs/inspector.md): what its requests do,
// on the actor's strand. The surfaces decode them (core/router/inspector_http.cpp) and the
// command runner brings them here (core/runtime/command_runner.cpp), so local and engine mode
// share every line of it.
//
// - Access: every request presents the actor's token (inspector_token.hpp) or the test override
//   (_RIVET_TEST_INSPECTOR_TOKEN). A new actor's token is written with its creation; an actor
//   stored before tokens existed gets one at its first inspector request.
// - Writes (a state patch, a queue send or reset, SQL) are answered once durable, as every other
//   reply of the runtime.
// - Features the actor does not have answer as RivetKit does: `isStateEnabled: false`,
//   `database.not_enabled`, `isWorkflowEnabled: false` with a null history.

#include "core/actor_instance.hpp"
#include "core/inspector/inspector_request.hpp"
#include "core/runtime_config.hpp"
#include "protocol/inspector/inspector_messages.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core::inspector {

/// 401 `inspector.unauthorized`: no token, or not the actor's.
Error unauthorized();
/// 404 `inspector.disabled`: the server runs with RIVET_INSPECTOR_DISABLE=1.
Error disabled();
/// The HTTP status of an inspector error (RivetKit's: 401, 404, 408, 400 for invalid input and
/// features not enabled, 500 otherwise).
unsigned status_of(const Error& error);

/// The token a new actor's creation write stores under token_key(); nullopt when none is kept
/// (the inspector is off, or the test override is set, as in RivetKit).
std::optional<std::string> token_for_new_actor(const RuntimeConfig& config);

/// Whether `presented` opens the actor's inspector.
Task<Result<void>> authorize(ActorInstance& instance, std::optional<std::string> presented);

/// The state as the inspector WebSocket carries it (CBOR); nullopt for an actor without state.
std::optional<std::string> wire_state(ActorInstance& instance);
/// The connections as the inspector WebSocket carries them (details in CBOR).
std::vector<protocol::inspector::Connection> wire_connections(ActorInstance& instance);
/// The workflow history as the WebSocket carries it (none: no workflow, or not loaded yet).
std::optional<std::string> wire_workflow_history(ActorInstance& instance);
/// The message an inspector WebSocket gets first.
protocol::inspector::Init init_message(ActorInstance& instance);
/// An attached inspector WebSocket ended (on the instance's strand).
Task<void> detach(std::shared_ptr<ActorInstance> instance, const net::WebSocket* socket);

/// Answers `request` as the JSON value RivetKit answers. RunAction is not answered here: the
/// command runner runs it on a short-lived connection, as an HTTP action.
Task<Result<Value>> answer(ActorInstance& instance, InspectorRequest request);

}  // namespace rivetkit::core::inspector
