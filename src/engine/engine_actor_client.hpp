#pragma once
// `c.client()` in engine mode: the core client (core/client/actor_client.hpp) over the engine's
// directory (its actor API) and its gateway, so a call reaches the callee wherever the engine
// placed it.

#include "core/client/actor_client.hpp"
#include "core/runtime.hpp"
#include "engine/engine_directory.hpp"
#include "engine/gateway_caller.hpp"

#include <boost/asio/any_io_executor.hpp>

namespace rivetkit::engine {

class EngineActorClient {
 public:
  EngineActorClient(boost::asio::any_io_executor ex, core::Runtime& runtime, EngineApiOptions api)
      : directory_(ex, api),
        caller_(ex, api, call_timeout(runtime)),
        client_(
            directory_,
            caller_,
            [&runtime](const std::string& name) { return runtime.definition(name) != nullptr; },
            runtime.config().clock) {}

  detail::ClientApi& api() { return client_; }

 private:
  // The longest a call may take: the slowest action timeout of the registry, after the longest
  // wait for the callee to start. The callee's own timeout answers first.
  static std::chrono::milliseconds call_timeout(const core::Runtime& runtime) {
    std::chrono::milliseconds longest{0};
    for (const auto& name : runtime.actor_names()) {
      if (auto definition = runtime.definition(name)) {
        longest = std::max(longest, definition->options.action_timeout);
      }
    }
    return longest + runtime.config().instance_wait + std::chrono::seconds(5);
  }

  EngineDirectory directory_;
  GatewayCaller caller_;
  core::ActorClient client_;
};

}  // namespace rivetkit::engine
