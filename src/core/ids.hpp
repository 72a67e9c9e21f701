#pragma once
// Identifiers: connection ids are UUID v4 strings (as rivetkit's), actor ids 30-character
// lowercase base-36 strings shaped like the engine's (envoy-protocol.md §4.9; opaque to clients).

#include <string>

namespace rivetkit::core {

std::string new_uuid_v4();
std::string new_actor_id();
/// A request id for logs and x-rivet-ray-id (same shape as an actor id).
std::string new_ray_id();

}  // namespace rivetkit::core
