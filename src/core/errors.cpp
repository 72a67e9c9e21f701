#include "core/errors.hpp"

#include "util/log.hpp"

#include <boost/system/system_error.hpp>

namespace rivetkit::core {

unsigned public_status_code(std::string_view group, std::string_view code) {
  if (group == "auth" && code == "forbidden") {
    return 403;
  }
  if (group == "actor") {
    if (code == "action_not_found" || code == "not_found") {
      return 404;
    }
    if (code == "action_timed_out") {
      return 408;
    }
    if (code == "invalid_request" || code == "invalid_params") {
      return 400;
    }
    if (code == "method_not_allowed") {
      return 405;
    }
  }
  if (group == "message" || group == "queue" || group == "kv") {
    return 400;
  }
  return 500;
}

std::string exception_message(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& err) {
    return err.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

Error error_from_exception(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const ActorError& err) {
    return err.error();
  } catch (const std::exception& err) {
    log::warn("handler threw: {}", err.what());
    return internal_error();
  } catch (...) {
    log::warn("handler threw a non-standard exception");
    return internal_error();
  }
}

Error action_not_found(std::string_view name) {
  return Error{"actor", "action_not_found", "Action `" + std::string(name) + "` was not found.",
               std::nullopt, true};
}

Error actor_not_found(std::string_view actor_id) {
  return Error{"actor", "not_found", "The actor does not exist or was destroyed.",
               Value::object({{"actorId", std::string(actor_id)}}), true};
}

Error forbidden() {
  return Error{"auth", "forbidden", "Forbidden", std::nullopt, true};
}

Error unknown_actor_name(const std::string& name) {
  return Error{"actor", "unknown_name", "No actor named '" + name + "' is registered",
               Value::object({{"name", name}}), true};
}

Error route_not_found(std::string_view path) {
  return Error{"actor", "not_found", "Actor route '" + std::string(path) + "' was not found.",
               Value::object({{"id", std::string(path)}, {"resource", "route"}}), true};
}

Error incoming_too_long() {
  return Error{"message", "incoming_too_long", "Incoming message too long", std::nullopt, true};
}

Error outgoing_too_long() {
  return Error{"message", "outgoing_too_long", "Outgoing message too long", std::nullopt, true};
}

Error invalid_request(std::string message) {
  return Error{"actor", "invalid_request", std::move(message), std::nullopt, true};
}

Error action_timed_out() {
  return Error{"actor", "action_timed_out", "Action timed out", std::nullopt, true};
}

Error method_not_allowed() {
  return Error{"actor", "method_not_allowed", "Method not allowed", std::nullopt, true};
}

Error generation_gone(std::uint32_t generation) {
  return Error{"actor", "generation_gone",
               "The actor generation " + std::to_string(generation)
                   + " this work was sent to stopped before it ran",
               std::nullopt, true};
}

bool is_generation_gone(const Error& error) {
  return error.group == "actor" && error.code == "generation_gone";
}

Error actor_stopping() {
  return Error{"actor", "stopping",
               "Actor stopping: Cannot accept new work while actor is stopping", std::nullopt,
               false};
}

}  // namespace rivetkit::core
