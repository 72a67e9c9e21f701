#pragma once
// The one error every decoder in this module reports: `actor.invalid_request` with a specific
// reason. The router maps it to HTTP 400 / WebSocket close 1011 "actor.invalid_request"
// (client-protocol.md §6.5, §6.8).

#include <rivetkit/error.hpp>
#include <rivetkit/result.hpp>

#include <string>

namespace rivetkit::protocol {

inline Error decode_error(std::string message) {
  return Error{"actor", "invalid_request", std::move(message), std::nullopt, false};
}

inline tl::unexpected<Error> fail_decode(std::string message) {
  return fail(decode_error(std::move(message)));
}

}  // namespace rivetkit::protocol
