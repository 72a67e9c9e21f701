#pragma once
// ActionCaller: how a mode runs an action on an actor it found by id, for actor-to-actor calls.
// Local mode hands it to the runtime in process (DispatchCaller); engine mode sends it through
// the engine's gateway, which runs it wherever the actor is placed.

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
};

}  // namespace rivetkit::core
