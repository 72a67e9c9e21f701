#include "core/runtime/actor_slot.hpp"

#include "core/errors.hpp"
#include "core/runtime/command_runner.hpp"
#include "util/metrics.hpp"
#include "util/spawn.hpp"

namespace rivetkit::core {

namespace {

Error runtime_shutting_down() {
  return Error{"actor", "stopping", "The runtime is shutting down", std::nullopt, false};
}

Error overloaded(std::size_t limit) {
  return Error{"actor", "overloaded", "Too many requests are waiting for the actor to start",
               Value::object({{"limit", static_cast<std::int64_t>(limit)}}), true};
}

// Wakes the slot's waiters at `deadline` (they re-check it). Holds the notifier, not the slot.
Task<void> watch_deadline(std::weak_ptr<Notifier> changed,
                          std::shared_ptr<util::Clock> clock,
                          util::SteadyTime deadline) {
  auto wait_op = clock->wait_until(deadline);
  co_await std::move(wait_op);
  if (auto notifier = changed.lock()) {
    notifier->notify_all();
  }
}

}  // namespace

// Holds a command's place among the slot's waiters for as long as it lives.
class ActorSlot::WaitingTurn {
 public:
  explicit WaitingTurn(ActorSlot& slot)
      : slot_(slot), waiter_(slot.waiters_.insert(slot.waiters_.end(), false)) {}
  ~WaitingTurn() {
    slot_.settle(waiter_);
    slot_.waiters_.erase(waiter_);
  }
  WaitingTurn(const WaitingTurn&) = delete;
  WaitingTurn& operator=(const WaitingTurn&) = delete;

  Waiter waiter() const { return waiter_; }

 private:
  ActorSlot& slot_;
  Waiter waiter_;
};

ActorSlot::ActorSlot(std::string actor_id, boost::asio::any_io_executor strand, SlotHost& host)
    : actor_id_(std::move(actor_id)),
      strand_(std::move(strand)),
      host_(host),
      changed_(std::make_shared<Notifier>(strand_)) {}

// ---- starting and stopping ----------------------------------------------------------------------

Task<Result<std::shared_ptr<ActorInstance>>> ActorSlot::start(SpecFactory make_spec) {
  while (true) {
    if (destroyed_) {
      co_return fail(actor_not_found(actor_id_));
    }
    if (instance_ && instance_->lifecycle().is(LifecycleState::kStarted) && !stopping_) {
      co_return instance_;
    }
    if (starting_ || stopping_) {
      std::uint64_t attempt = attempts_;
      co_await changed_->wait();
      if (attempts_ != attempt && !instance_ && last_error_) {
        co_return fail(*last_error_);
      }
      continue;
    }
    if (host_.slot_shutting_down()) {
      co_return fail(runtime_shutting_down());
    }
    starting_ = true;
    auto spec_op = make_spec();
    auto spec = co_await std::move(spec_op);
    if (spec && !spec->store) {
      // The generation's store is the driver's to say (local SQLite, engine KV).
      auto store_op = spec->driver->storage_for(spec->actor_id, spec->generation);
      auto store = co_await std::move(store_op);
      if (store) {
        spec->store = std::move(*store);
      } else {
        spec = fail(store.error());
      }
    }
    std::shared_ptr<ActorInstance> instance;
    Result<void> started;
    if (spec) {
      instance = std::make_shared<ActorInstance>(strand_, std::move(*spec), host_.slot_config());
      auto start_op = instance->start();
      started = co_await std::move(start_op);
    } else {
      started = fail(spec.error());
    }
    starting_ = false;
    ++attempts_;
    if (!started) {
      last_error_ = started.error();
      changed_->notify_all();
      co_return fail(started.error());
    }
    last_error_.reset();
    instance_ = instance;
    metrics::runtime().actors_awake.with({instance->name()}).add();
    metrics::runtime().actor_starts.with({instance->name()}).inc();
    for (bool& owed : waiters_) {
      if (!owed) {
        owed = true;
        ++owed_;
      }
    }
    changed_->notify_all();
    co_return instance;
  }
}

Task<void> ActorSlot::stop(StopReason reason) {
  if (reason == StopReason::kDestroy) {
    destroyed_ = true;  // from now on nobody gets (or starts) this actor
  }
  while (starting_ || stopping_ || owed_ > 0) {
    co_await changed_->wait();
  }
  auto instance = instance_;
  if (!instance) {
    changed_->notify_all();
    co_return;
  }
  stopping_ = true;
  auto op = instance->stop(reason);
  co_await std::move(op);
  metrics::runtime().actors_awake.with({instance->name()}).sub();
  metrics::runtime()
      .actor_stops.with({instance->name(), reason == StopReason::kSleep ? "sleep" : "destroy"})
      .inc();
  instance_.reset();
  stopping_ = false;
  changed_->notify_all();
}

// ---- commands -----------------------------------------------------------------------------------

void ActorSlot::settle(Waiter waiter) {
  if (*waiter) {
    *waiter = false;
    if (--owed_ == 0) {
      changed_->notify_all();
    }
  }
}

Error ActorSlot::waited_too_long(const ActorInstance* refused_by) const {
  if (refused_by != nullptr) {
    return actor_stopping();
  }
  return Error{"guard", "actor_ready_timeout", "The actor did not become ready in time",
               std::nullopt, true};
}

Task<Result<std::shared_ptr<ActorInstance>>> ActorSlot::next_instance(
    Waiter waiter,
    const ActorInstance* refused_by,
    bool live_is_enough,
    bool wake,
    util::SteadyTime deadline) {
  const auto& clock = host_.slot_config().clock;
  bool woke = false;      // since the slot last changed
  bool watching = false;  // the deadline watcher runs
  while (true) {
    const auto* inst = instance_.get();
    if (inst != nullptr && inst != refused_by) {
      // A destroy waits for the start; until it begins, the started instance takes work.
      if (!stopping_ && inst->lifecycle().accepting()) {
        co_return instance_;
      }
      if (live_is_enough && !inst->lifecycle().is(LifecycleState::kTerminated)) {
        co_return instance_;
      }
    }
    if (destroyed_ && !starting_) {
      co_return fail(actor_not_found(actor_id_));
    }
    if (inst == nullptr && !starting_ && !stopping_) {
      if (!wake) {
        co_return std::shared_ptr<ActorInstance>();
      }
      if (host_.slot_shutting_down()) {
        co_return fail(runtime_shutting_down());
      }
      if (!woke) {
        woke = true;
        auto wake_op = host_.wake(actor_id_);
        auto woken = co_await std::move(wake_op);
        if (!woken) {
          co_return fail(woken.error());
        }
        continue;
      }
    }
    // Wait for the slot to change (a start or stop completing), within the deadline. A waiter
    // resumes straight from notify_all, in arrival order, ahead of a stop queued meanwhile (work
    // that waited for a start runs on it before a destroy that came later begins); the deadline
    // is a watcher that wakes the waiters, not a timer raced against each wait.
    if (clock->steady_now() >= deadline) {
      co_return fail(waited_too_long(refused_by));
    }
    settle(waiter);  // it had its turn on the instance that started, if any, and took none
    if (!watching) {
      watching = true;
      util::spawn(strand_, watch_deadline(changed_, clock, deadline), "slot wait deadline");
    }
    auto changed_op = changed_->wait();
    co_await std::move(changed_op);
    woke = false;
  }
}

Task<Dispatched<Reply>> ActorSlot::dispatch(Command command,
                                            std::optional<std::uint32_t> generation) {
  const auto& config = host_.slot_config();
  const auto deadline = config.clock->steady_now() + config.instance_wait;
  const auto* closed = std::get_if<ConnectionClosedCommand>(&command);
  const bool live_is_enough = closed != nullptr;
  // Bound to a generation, a command never wakes the actor: that generation ran here already.
  const bool wake = !generation && (closed == nullptr || closed->wake);
  const ActorInstance* refused_by = nullptr;
  std::shared_ptr<ActorInstance> last;
  while (true) {
    // Bound to a generation that stops (or asked to), or that another replaced: it never runs.
    if (generation
        && (refused_by != nullptr
            || (instance_
                && (stopping_ || instance_->generation() != *generation
                    || (!instance_->lifecycle().accepting()
                        && !instance_->lifecycle().is(LifecycleState::kLoading)))))) {
      co_return Dispatched<Reply>{fail(generation_gone(*generation)), last};
    }
    std::shared_ptr<ActorInstance> instance;
    std::optional<WaitingTurn> turn;  // held until the instance took or refused the command
    if (instance_ && instance_.get() != refused_by && !stopping_
        && instance_->lifecycle().accepting()) {
      instance = instance_;  // the common case: it runs now
    } else {
      if (waiters_.size() >= config.max_waiting_commands) {
        co_return Dispatched<Reply>{fail(overloaded(config.max_waiting_commands)), last};
      }
      turn.emplace(*this);
      auto next_op = next_instance(turn->waiter(), refused_by, live_is_enough, wake, deadline);
      auto next = co_await std::move(next_op);
      if (!next) {
        co_return Dispatched<Reply>{fail(next.error()), last};
      }
      if (!*next) {
        if (generation) {
          co_return Dispatched<Reply>{fail(generation_gone(*generation)), last};
        }
        co_return Dispatched<Reply>{Reply(false), nullptr};  // a close nobody was there to see
      }
      instance = std::move(*next);
      if (generation && instance->generation() != *generation) {
        co_return Dispatched<Reply>{fail(generation_gone(*generation)), last};
      }
    }
    auto run_op = run_command(instance, command, [&turn] { turn.reset(); });
    auto attempt = co_await std::move(run_op);
    turn.reset();
    if (auto* result = std::get_if<Result<Reply>>(&attempt)) {
      co_return Dispatched<Reply>{std::move(*result), std::move(instance)};
    }
    refused_by = instance.get();
    last = std::move(instance);
  }
}

}  // namespace rivetkit::core
