#pragma once
// GatewayCaller: actor-to-actor calls in engine mode. The action or queue send goes through the
// engine's gateway (POST /gateway/{actor id}/action/{name} or /queue/{name}, CBOR as the official
// client sends it), so the engine wakes the callee and runs it on whichever envoy holds it, this
// one or another.

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

  Task<Result<Value>> call(std::string actor_id, core::ClientWork work, Value params) override;
  /// A WebSocket to /gateway/{actor id}{path}; the engine answers 101 even when it cannot route
  /// it, then closes with "<group>.<code>#<ray id>" (client-protocol.md §5.5).
  Task<Result<std::shared_ptr<net::WebSocket>>> open_socket(
      std::string actor_id, std::string path, std::vector<std::string> protocols) override;
  /// get and get-or-create go in one request with the query in `rvt-*` parameters, as the
  /// official client sends them (client-protocol.md §5.2), unless a key part holds a ',' (the
  /// engine splits on it) or the input is over the 4 KiB the query may carry.
  bool routes_query(const detail::ActorQuery& query) const override;
  Task<Result<Value>> call_query(detail::ActorQuery query,
                                 core::ClientWork work,
                                 Value params) override;

 private:
  /// POSTs `work` to `base` (the gateway's path to the actor) + its route + `query`.
  Task<Result<Value>> post(std::string base,
                           std::string query,
                           core::ClientWork work,
                           Value params);

  boost::asio::any_io_executor ex_;
  EngineApiOptions options_;
  std::chrono::milliseconds action_timeout_;
};

}  // namespace rivetkit::engine
