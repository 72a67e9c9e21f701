#include "core/actor/action_watch.hpp"

#include "util/spawn.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <vector>

namespace rivetkit::core {

namespace asio = boost::asio;

ActionWatch::ActionWatch(std::shared_ptr<util::Clock> clock)
    : clock_(std::move(clock)), state_(std::make_shared<State>()) {}

std::size_t ActionWatch::running() const {
  return state_->entries.size();
}

Task<ActionWatch::Ended> ActionWatch::run(Task<Result<Value>> action,
                                          std::chrono::milliseconds limit) {
  auto state = state_;  // the watch's owner may go while the action runs
  if (state->aborted) {
    co_return Ended{Outcome::kAborted, Result<Value>(Value())};
  }
  auto ex = co_await asio::this_coro::executor;
  Entry entry;
  entry.deadline = clock_->steady_now() + limit;
  state->entries.push_back(entry);
  if (!state->waiting_until || entry.deadline < *state->waiting_until) {
    // No wait under way, or one for a later deadline (a shorter limit than before): a wait for
    // this deadline. A superseded wait ends by itself when it wakes.
    state->waiting_until = entry.deadline;
    asio::co_spawn(
        ex, wait(state, clock_, entry.deadline),
        asio::bind_cancellation_slot(state->wait_signal.slot(), [](std::exception_ptr e) {
          if (e) {
            util::detail::log_spawn_failure("action deadline wait", e);
          }
        }));
  }
  auto op = asio::co_spawn(ex, std::move(action),
                           asio::bind_cancellation_slot(entry.signal.slot(), asio::use_awaitable));
  Result<Value> result = co_await std::move(op);
  entry.hook.unlink();
  co_return Ended{entry.outcome, std::move(result)};
}

void ActionWatch::abort_all() {
  auto& state = *state_;
  state.aborted = true;
  // Collected first: a cancellation may complete an action (and unlink its entry) at once.
  std::vector<Entry*> running;
  for (auto& entry : state.entries) {
    running.push_back(&entry);
  }
  for (Entry* entry : running) {
    entry->outcome = Outcome::kAborted;
    entry->signal.emit(asio::cancellation_type::all);
  }
  if (state.waiting_until) {
    state.waiting_until.reset();
    state.wait_signal.emit(asio::cancellation_type::all);
  }
}

Task<void> ActionWatch::wait(std::shared_ptr<State> state,
                             std::shared_ptr<util::Clock> clock,
                             util::SteadyTime until) {
  for (;;) {
    try {
      auto wait_op = clock->wait_until(until);
      co_await std::move(wait_op);
    } catch (const boost::system::system_error& e) {
      if (e.code() == asio::error::operation_aborted) {
        co_return;  // abort_all(): the actor is stopping
      }
      throw;
    }
    if (state->waiting_until != until) {
      co_return;  // superseded by a wait for an earlier deadline, or aborted
    }
    const auto now = clock->steady_now();
    std::optional<util::SteadyTime> next;
    std::vector<Entry*> overdue;
    for (auto& entry : state->entries) {
      if (entry.outcome != Outcome::kCompleted) {
        continue;  // cancelled already, still unwinding
      }
      if (entry.deadline <= now) {
        overdue.push_back(&entry);
      } else if (!next || entry.deadline < *next) {
        next = entry.deadline;
      }
    }
    for (Entry* entry : overdue) {
      entry->outcome = Outcome::kTimedOut;
      entry->signal.emit(asio::cancellation_type::all);
    }
    state->waiting_until = next;
    if (!next) {
      co_return;  // no action runs: the next one starts a wait
    }
    until = *next;
  }
}

}  // namespace rivetkit::core
