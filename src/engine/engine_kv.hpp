#pragma once
// What engine mode's actor storage needs from the engine: one KV request for an actor, answered
// by the engine (envoy-protocol.md §4.8). EnvoyLink sends it over the envoy's WebSocket; the
// storage tests answer it from an in-memory model of the engine's KV with crash injection.

#include "protocol/envoy/messages.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <string>

namespace rivetkit::engine {

namespace envoy = protocol::envoy;

class EngineKv {
 public:
  virtual ~EngineKv() = default;
  /// One KV request for an actor; resumes with the engine's answer (a KvErrorResponse is an
  /// answer) or an error when the request could not be delivered or answered.
  virtual Task<Result<envoy::KvResponseData>> kv(std::string actor_id,
                                                 envoy::KvRequestData request) = 0;
};

}  // namespace rivetkit::engine
