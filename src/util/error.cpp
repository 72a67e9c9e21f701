#include <rivetkit/error.hpp>

#include <array>
#include <string_view>

namespace rivetkit {

Error internal_error() {
  return Error{"core", "internal_error", kInternalErrorMessage, std::nullopt, false};
}

bool is_public_code(std::string_view group, std::string_view code) {
  // core-semantics.md §3: the pairs whose message and metadata reach clients.
  if (group == "user" || group == "schedule" || group == "kv") {
    return true;
  }
  if (group == "auth") {
    return code == "forbidden";
  }
  if (group == "message") {
    return code == "incoming_too_long" || code == "outgoing_too_long";
  }
  if (group == "actor") {
    static constexpr std::array<std::string_view, 5> kCodes = {
        "not_found", "action_not_found", "method_not_allowed", "action_timed_out", "aborted"};
    for (auto c : kCodes) {
      if (c == code) {
        return true;
      }
    }
    return false;
  }
  if (group == "queue") {
    static constexpr std::array<std::string_view, 9> kCodes = {
        "full",           "message_too_large",          "message_invalid",
        "invalid_payload", "invalid_completion_payload", "already_completed",
        "previous_message_not_completed", "complete_not_configured", "timed_out"};
    for (auto c : kCodes) {
      if (c == code) {
        return true;
      }
    }
    return false;
  }
  if (group == "actor_runtime_socket") {
    return code == "unsupported" || code == "not_enabled" || code == "closed"
           || code == "database_unavailable";
  }
  return false;
}

Error sanitize_for_client(const Error& e) {
  if (e.is_public || is_public_code(e.group, e.code)) {
    Error out = e;
    out.is_public = true;
    return out;
  }
  return Error{e.group, e.code, kInternalErrorMessage, std::nullopt, false};
}

UserError::UserError(std::string message, std::string code, std::optional<Value> metadata)
    : ActorError(Error{"user", std::move(code), std::move(message), std::move(metadata), true}) {}

}  // namespace rivetkit
