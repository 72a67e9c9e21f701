#pragma once
// ActionCaller: how a mode runs an action on an actor it found by id, for actor-to-actor calls.
// Local mode hands it to the runtime in process (DispatchCaller); engine mode sends it through
// the engine's gateway, which runs it wherever the actor is placed.

#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <string>

namespace rivetkit::core {

class ActionCaller {
 public:
  virtual ~ActionCaller() = default;
  /// Runs `action(args)` on actor `actor_id` as a short-lived connection with `params`, waking
  /// the actor if it sleeps. The error is the callee's (or actor.not_found), unsanitized.
  virtual Task<Result<Value>> call(std::string actor_id,
                                   std::string action,
                                   Array args,
                                   Value params) = 0;

  /// Whether call_query runs this get / get-or-create query in one request, the mode resolving
  /// it on the way (engine mode's gateway does; local mode finds actors in process anyway).
  virtual bool routes_query(const detail::ActorQuery& query) const {
    (void)query;
    return false;
  }
  /// Runs `action(args)` on the actor `query` names (only when routes_query said so).
  virtual Task<Result<Value>> call_query(detail::ActorQuery query,
                                         std::string action,
                                         Array args,
                                         Value params) {
    (void)query;
    (void)action;
    (void)args;
    (void)params;
    co_return fail(
        Error{"core", "internal_error", "This mode does not route queries", std::nullopt, false});
  }
};

}  // namespace rivetkit::core
