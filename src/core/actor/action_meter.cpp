#include "core/actor/action_meter.hpp"

#include "util/metrics.hpp"

namespace rivetkit::core {

ActionMeter::ActionMeter(std::string_view actor, std::string_view action)
    : actor_(actor),
      action_(action),
      duration_(metrics::runtime().action_duration.with({actor, action})),
      start_(std::chrono::steady_clock::now()) {
  metrics::runtime().actions.with({actor, action}).inc();
}

void ActionMeter::not_found(std::string_view actor) {
  metrics::runtime().action_errors.with({actor, "", "actor.action_not_found"}).inc();
}

Result<Value> ActionMeter::finished(Result<Value> result) {
  auto elapsed = std::chrono::steady_clock::now() - start_;
  duration_.observe(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()));
  if (!result) {
    const Error& e = result.error();
    metrics::runtime().action_errors.with({actor_, action_, e.group + "." + e.code}).inc();
  }
  return result;
}

}  // namespace rivetkit::core
