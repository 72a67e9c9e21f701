#include "core/actor/lifecycle.hpp"

#include "util/log.hpp"

namespace rivetkit::core {

std::string_view to_string(LifecycleState state) {
  switch (state) {
    case LifecycleState::kLoading:
      return "loading";
    case LifecycleState::kStarted:
      return "started";
    case LifecycleState::kSleepGrace:
      return "sleep_grace";
    case LifecycleState::kSleepFinalize:
      return "sleep_finalize";
    case LifecycleState::kDestroyGrace:
      return "destroy_grace";
    case LifecycleState::kDestroying:
      return "destroying";
    case LifecycleState::kTerminated:
      return "terminated";
    case LifecycleState::kFailed:
      return "failed";
  }
  return "unknown";
}

bool lifecycle_transition_allowed(LifecycleState from, LifecycleState to) {
  using S = LifecycleState;
  switch (from) {
    case S::kLoading:
      return to == S::kStarted || to == S::kFailed;
    case S::kStarted:
      return to == S::kSleepGrace || to == S::kDestroyGrace;
    case S::kSleepGrace:
      return to == S::kSleepFinalize;
    case S::kDestroyGrace:
      return to == S::kDestroying;
    case S::kSleepFinalize:
    case S::kDestroying:
      return to == S::kTerminated;
    case S::kTerminated:
    case S::kFailed:
      return false;
  }
  return false;
}

Lifecycle::Lifecycle(boost::asio::any_io_executor strand)
    : aborted_(strand), finalizing_(std::move(strand)) {}

bool Lifecycle::aborted() const {
  switch (state_) {
    case LifecycleState::kSleepGrace:
    case LifecycleState::kSleepFinalize:
    case LifecycleState::kDestroyGrace:
    case LifecycleState::kDestroying:
    case LifecycleState::kTerminated:
      return true;
    default:
      return false;
  }
}

bool Lifecycle::finalizing() const {
  return state_ == LifecycleState::kSleepFinalize || state_ == LifecycleState::kDestroying
         || state_ == LifecycleState::kTerminated;
}

bool Lifecycle::can_write() const {
  return state_ != LifecycleState::kLoading && storage_open();
}

bool Lifecycle::storage_open() const {
  return state_ != LifecycleState::kTerminated && state_ != LifecycleState::kFailed;
}

bool Lifecycle::move_to(LifecycleState to) {
  if (!lifecycle_transition_allowed(state_, to)) {
    log::error("refused actor lifecycle transition {} -> {}", to_string(state_), to_string(to));
    return false;
  }
  state_ = to;
  return true;
}

bool Lifecycle::start_completed() {
  return move_to(LifecycleState::kStarted);
}

bool Lifecycle::start_failed() {
  return move_to(LifecycleState::kFailed);
}

bool Lifecycle::request_stop() {
  if (state_ != LifecycleState::kStarted) {
    return false;
  }
  stop_requested_ = true;
  return true;
}

bool Lifecycle::begin_grace(StopReason reason) {
  if (!move_to(reason == StopReason::kDestroy ? LifecycleState::kDestroyGrace
                                              : LifecycleState::kSleepGrace)) {
    return false;
  }
  stop_requested_ = true;
  aborted_.notify_all();
  return true;
}

bool Lifecycle::finalize() {
  const auto to = state_ == LifecycleState::kDestroyGrace ? LifecycleState::kDestroying
                                                          : LifecycleState::kSleepFinalize;
  if (!move_to(to)) {
    return false;
  }
  finalizing_.notify_all();
  return true;
}

bool Lifecycle::terminate() {
  return move_to(LifecycleState::kTerminated);
}

Task<void> Lifecycle::wait_aborted() {
  while (!aborted()) {
    co_await aborted_.wait();
  }
}

Task<void> Lifecycle::wait_finalizing() {
  while (!finalizing()) {
    co_await finalizing_.wait();
  }
}

}  // namespace rivetkit::core
