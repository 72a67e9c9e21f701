#pragma once
// Lifecycle: the states of one actor instance (rivetkit-core's LifecycleState,
// core-semantics.md §1.1), with the allowed transitions in one place.
//
//   Loading -> Started -> SleepGrace   -> SleepFinalize -> Terminated
//                      -> DestroyGrace -> Destroying    -> Terminated
//   Loading -> Failed                        (a start that did not complete)
//
// - Loading: start() loads the actor and runs the create/wake hooks.
// - Started: serving. The actor may ask to be stopped (sleep(), destroy(), the idle rule):
//   stop_requested() is then true and it takes no new work, but it is still Started until the
//   driver runs the stop.
// - SleepGrace / DestroyGrace: the stop began. The abort signal has fired; in-flight work drains
//   within the grace period, on_sleep / on_destroy runs, connections that do not survive close.
// - SleepFinalize / Destroying: the grace is over; whatever still runs is cancelled and the final
//   save (sleep) or the saves under way (destroy) complete.
// - Terminated: stopped. Failed: the start failed; the instance is discarded.
//
// A transition that the table does not allow is a bug in the caller: it is refused (false) and
// logged, and the state stays. The notifiers wake coroutines waiting for the abort signal and for
// the end of the grace. Single strand.

#include "core/notifier.hpp"
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <string_view>

namespace rivetkit::core {

enum class StopReason { kSleep, kDestroy };

enum class LifecycleState : std::uint8_t {
  kLoading,
  kStarted,
  kSleepGrace,
  kSleepFinalize,
  kDestroyGrace,
  kDestroying,
  kTerminated,
  kFailed,
};

std::string_view to_string(LifecycleState state);

/// Whether the table allows `from -> to`.
bool lifecycle_transition_allowed(LifecycleState from, LifecycleState to);

class Lifecycle {
 public:
  explicit Lifecycle(boost::asio::any_io_executor strand);
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  LifecycleState state() const { return state_; }
  bool is(LifecycleState s) const { return state_ == s; }

  /// Started and no stop asked for: new work is taken.
  bool accepting() const { return state_ == LifecycleState::kStarted && !stop_requested_; }
  /// A stop was asked for (by the actor or the idle rule) or is under way.
  bool stop_requested() const { return stop_requested_; }
  /// The abort signal has fired: a stop began (grace or later).
  bool aborted() const;
  /// The grace is over: what still runs is cancelled.
  bool finalizing() const;
  /// The instance may write to its storage (not while loading, nor once ended).
  bool can_write() const;
  /// The instance's storage is still open to user calls (from Loading until it ends).
  bool storage_open() const;

  // ---- transitions ----------------------------------------------------------------------------
  /// Loading -> Started.
  bool start_completed();
  /// Loading -> Failed.
  bool start_failed();
  /// Notes that the actor asked to be stopped; the state stays (the driver runs the stop).
  /// False when it is not Started.
  bool request_stop();
  /// Started -> SleepGrace | DestroyGrace; fires the abort notifier.
  bool begin_grace(StopReason reason);
  /// SleepGrace -> SleepFinalize, DestroyGrace -> Destroying; fires the finalize notifier.
  bool finalize();
  /// SleepFinalize | Destroying -> Terminated.
  bool terminate();

  /// Resumes once aborted() (at once if it is).
  Task<void> wait_aborted();
  /// Resumes once finalizing() (at once if it is).
  Task<void> wait_finalizing();
  /// The notifier that fires with the abort (for races against other waits).
  Notifier& abort_notifier() { return aborted_; }

 private:
  bool move_to(LifecycleState to);

  LifecycleState state_ = LifecycleState::kLoading;
  bool stop_requested_ = false;
  Notifier aborted_;
  Notifier finalizing_;
};

}  // namespace rivetkit::core
