#pragma once
// GatewayCaller: actor-to-actor calls in engine mode. The action goes through the engine's
// gateway (POST /gateway/{actor id}/action/{name}, CBOR as the official client sends it), so the
// engine wakes the callee and runs it on whichever envoy holds it, this one or another.

#include "core/client/action_caller.hpp"
#include "engine/engine_api.hpp"

#include <boost/asio/any_io_executor.hpp>

namespace rivetkit::engine {

class GatewayCaller final : public core::ActionCaller {
 public:
  /// `action_timeout` bounds each call (the callee's own timeout answers first when it is
  /// shorter).
  GatewayCaller(boost::asio::any_io_executor ex,
                EngineApiOptions options,
                std::chrono::milliseconds action_timeout);

  Task<Result<Value>> call(std::string actor_id,
                           std::string action,
                           Array args,
                           Value params) override;

 private:
  boost::asio::any_io_executor ex_;
  EngineApiOptions options_;
  std::chrono::milliseconds action_timeout_;
};

}  // namespace rivetkit::engine
