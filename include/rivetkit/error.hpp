#pragma once
/// Structured errors, shaped like RivetKit's (`group`, `code`, `message`, `metadata`).
///
/// Errors cross the wire in two ways, as in RivetKit 2.3.19:
/// - public errors keep their message and metadata;
/// - every other error keeps group and code, but its message becomes
///   "An internal error occurred" and its metadata is dropped.
/// User code throws rivetkit::UserError (always public). Any other exception escaping a handler
/// becomes the generic `core.internal_error`.

#include <rivetkit/value.hpp>

#include <exception>
#include <optional>
#include <string>

namespace rivetkit {

struct Error {
  std::string group;
  std::string code;
  std::string message;
  std::optional<Value> metadata;
  /// Whether message and metadata may be shown to clients.
  bool is_public = false;

  /// "group.code", as used in WebSocket close reasons and logs.
  std::string qualified_code() const { return group + "." + code; }
};

/// The message non-public errors carry on the wire.
inline constexpr const char* kInternalErrorMessage = "An internal error occurred";

/// `core.internal_error` with the generic message.
Error internal_error();

/// The (group, code) pairs RivetKit treats as public (their message and metadata reach clients).
bool is_public_code(std::string_view group, std::string_view code);

/// The error as a client may see it: non-public errors lose message and metadata.
Error sanitize_for_client(const Error& e);

/// Base exception that carries a structured Error. Handlers may throw it (or UserError).
class ActorError : public std::exception {
 public:
  explicit ActorError(Error e) : error_(std::move(e)) {}
  const Error& error() const noexcept { return error_; }
  const char* what() const noexcept override { return error_.message.c_str(); }

 private:
  Error error_;
};

/// A public error raised by user code: group "user", code defaulting to "user_error".
/// Mirrors TS `new UserError(message, {code, metadata})`.
class UserError : public ActorError {
 public:
  explicit UserError(std::string message,
                     std::string code = "user_error",
                     std::optional<Value> metadata = std::nullopt);
};

}  // namespace rivetkit
