#pragma once
// One-line, human-readable summaries of envoy messages for debug logs, e.g.
// "ToEnvoyCommands[start tx01t8p8..@1#1 counter]" or "ToRivetPong[1796207610669]".
// Payload bytes are never printed, only their sizes; ids are shortened to 8 characters.

#include "protocol/envoy/messages.hpp"

#include <string>

namespace rivetkit::protocol::envoy {

std::string describe(const ToRivet& message);
std::string describe(const ToEnvoy& message);

}  // namespace rivetkit::protocol::envoy
