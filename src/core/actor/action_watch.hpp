#pragma once
// ActionWatch: an action's time limit (`action_timeout`) and the hard abort at the end of a stop's
// grace period, without a race per action.
//
// Racing each action against a timer and the abort notifier (`action || timer || abort`) cost
// every action three spawned coroutines, a timer in the reactor's queue and two exceptions
// from the cancelled losers: about a tenth of the server's CPU per action under load (profile
// in bench/results/2026-12-08-local-profile.md). Here an action runs in one spawned coroutine
// whose cancellation slot the watch holds, and one wait per actor serves every running action:
// it wakes at the earliest deadline, cancels the actions past theirs (they end as kTimedOut) and
// waits again for the next one, or ends when none runs. Actions of one actor share one limit, so
// a new action's deadline is never earlier than the wait already under way: a stream of actions
// costs one timer per limit, not one per action. abort_all() cancels every running action (they
// end as kAborted) and every later one before it starts.
//
// Cancelling an action means what it meant for the race: its current suspension point ends with
// operation_aborted, and the result is decided once the action has unwound. Single strand.

#include "util/clock.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/intrusive/list.hpp>

#include <chrono>
#include <memory>
#include <optional>

namespace rivetkit::core {

class ActionWatch {
 public:
  enum class Outcome { kCompleted, kTimedOut, kAborted };
  struct Ended {
    Outcome outcome = Outcome::kCompleted;
    Result<Value> result;  // the action's own result when kCompleted
  };

  explicit ActionWatch(std::shared_ptr<util::Clock> clock);
  ActionWatch(const ActionWatch&) = delete;
  ActionWatch& operator=(const ActionWatch&) = delete;

  /// Runs `action` (which must not throw: wrap it with catching()) on the calling coroutine's
  /// executor within `limit`.
  Task<Ended> run(Task<Result<Value>> action, std::chrono::milliseconds limit);
  /// The grace period is over: cancels every running action and refuses later ones; the wait
  /// ends too, so nothing of the actor stays in the timer queue.
  void abort_all();
  /// Actions running now.
  std::size_t running() const;

 private:
  using Hook = boost::intrusive::list_member_hook<
      boost::intrusive::link_mode<boost::intrusive::auto_unlink>>;
  struct Entry {
    Hook hook;
    util::SteadyTime deadline{};
    boost::asio::cancellation_signal signal;
    Outcome outcome = Outcome::kCompleted;
  };
  using Entries = boost::intrusive::list<Entry,
                                         boost::intrusive::member_hook<Entry, Hook, &Entry::hook>,
                                         boost::intrusive::constant_time_size<false>>;
  // Shared with the wait, which may outlive the watch by the rest of its wait when the watch goes
  // without abort_all() (an instance that never stopped).
  struct State {
    Entries entries;
    std::optional<util::SteadyTime> waiting_until;  // the wait under way, if any
    boost::asio::cancellation_signal wait_signal;
    bool aborted = false;
  };

  static Task<void> wait(std::shared_ptr<State> state,
                         std::shared_ptr<util::Clock> clock,
                         util::SteadyTime until);

  std::shared_ptr<util::Clock> clock_;
  std::shared_ptr<State> state_;
};

}  // namespace rivetkit::core
