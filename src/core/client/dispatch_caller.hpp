#pragma once
// DispatchCaller: actor-to-actor calls in process, through Runtime::dispatch (local mode). The
// arguments and the result are copied, never encoded; the callee runs the call as an HTTP action
// on its own strand (connection hooks, action timeout and the output gate included).

#include "core/client/action_caller.hpp"

namespace rivetkit::core {

class Runtime;

class DispatchCaller final : public ActionCaller {
 public:
  explicit DispatchCaller(Runtime& runtime) : runtime_(runtime) {}

  Task<Result<Value>> call(std::string actor_id,
                           std::string action,
                           Array args,
                           Value params) override;

 private:
  Runtime& runtime_;
};

}  // namespace rivetkit::core
