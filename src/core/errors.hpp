#pragma once
// Error helpers shared by the actor router and the drivers: the one status mapping
// (client-protocol.md §6.5, core-semantics.md §3) and constructors for the errors the runtime
// itself raises.

#include <rivetkit/error.hpp>

#include <exception>
#include <string>
#include <string_view>

namespace rivetkit::core {

/// HTTP status for an error answered by the actor router.
unsigned public_status_code(std::string_view group, std::string_view code);

/// Converts an exception caught at a handler boundary: ActorError keeps its structured error,
/// anything else becomes core.internal_error (and is logged by the caller).
Error error_from_exception(std::exception_ptr e);
/// The exception's own message (what() or the ActorError's message), for logs.
std::string exception_message(std::exception_ptr e);

Error action_not_found(std::string_view name);
Error actor_not_found(std::string_view actor_id);
/// auth.forbidden: a rule of the actor refused (RivetKit's forbiddenError).
Error forbidden();
/// No actor type of this name is registered.
Error unknown_actor_name(const std::string& name);
Error route_not_found(std::string_view path);
Error incoming_too_long();
Error outgoing_too_long();
Error invalid_request(std::string message);
Error action_timed_out();
Error method_not_allowed();
/// The actor is stopping and takes no new work (a connection opened meanwhile).
Error actor_stopping();
/// A command bound to one generation (engine mode: a tunneled request) found that generation
/// stopped. The gateway that sent it retries it itself; it must not run on another generation.
Error generation_gone(std::uint32_t generation);
bool is_generation_gone(const Error& error);

}  // namespace rivetkit::core
