#pragma once
// ActionMeter: what one action run records in the process metrics (util/metrics.hpp): the call,
// its duration from start to result, and its error code when it fails. Names come from the
// actor's definition (the action was found there), never from the client's raw input.

#include <rivetkit/result.hpp>
#include <rivetkit/value.hpp>

#include <chrono>
#include <string_view>

namespace rivetkit::metrics {
class Counter;
class Histogram;
}  // namespace rivetkit::metrics

namespace rivetkit::core {

class ActionMeter {
 public:
  ActionMeter(std::string_view actor, std::string_view action);

  /// A call of an action the actor does not declare: an error whose action label is empty (the
  /// name is the client's, so it never becomes a label).
  static void not_found(std::string_view actor);

  /// Records the run's end and hands its result back.
  Result<Value> finished(Result<Value> result);

 private:
  std::string_view actor_;
  std::string_view action_;
  metrics::Histogram& duration_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace rivetkit::core
