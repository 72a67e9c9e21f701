#pragma once
// ActorSlot: one actor id's place in the runtime, which outlives the actor's instances
// (generations). Starting, stopping and every command run on the slot's strand.
//
// Commands (core/runtime/command.hpp) come in through dispatch(). A command runs on the current
// instance if it takes work. While an instance starts, stops or has asked to stop, the command
// waits in the slot and runs on the next instance; when the actor sleeps, the slot asks the mode
// to wake it (SlotHost::wake). A refusal is typed (the runner's Refused), never an error code to
// compare. The wait is bounded in count (max_waiting_commands: past it, actor.overloaded) and in
// time (on the injected clock: guard.actor_ready_timeout, or actor.stopping when the instance
// never finished stopping). A destroyed actor answers actor.not_found.
//
// Commands that were waiting when an instance started are owed a turn on it: a stop that comes
// later (a destroy issued during the start, say) begins only once each of them has been taken or
// refused by that instance, or has given up. So the work that woke an actor is not lost to a stop
// queued behind the start. A command that finds the instance not taking work gives its turn back
// before it waits again, so a stop never waits on work that waits for that stop.

#include "core/actor_instance.hpp"
#include "core/notifier.hpp"
#include "core/runtime/command.hpp"
#include "core/runtime_config.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>

namespace rivetkit::core {

/// What a slot needs from the runtime that owns it.
class SlotHost {
 public:
  virtual ~SlotHost() = default;
  virtual const RuntimeConfig& slot_config() const = 0;
  virtual bool slot_shutting_down() const = 0;
  /// Asks the mode to wake the sleeping actor (local mode starts it in this slot; engine mode
  /// asks the engine, which starts it here or elsewhere). Returns once the wake was asked for or
  /// done; an error ends the commands waiting for it (actor.not_found: it does not exist).
  virtual Task<Result<void>> wake(std::string actor_id) = 0;
};

class ActorSlot {
 public:
  using SpecFactory = std::function<Task<Result<ActorInstance::Spec>>()>;

  ActorSlot(std::string actor_id, boost::asio::any_io_executor strand, SlotHost& host);
  ActorSlot(const ActorSlot&) = delete;
  ActorSlot& operator=(const ActorSlot&) = delete;

  const std::string& actor_id() const { return actor_id_; }
  const boost::asio::any_io_executor& strand() const { return strand_; }

  // Everything below runs on strand().

  /// The started instance, starting one with `make_spec` if none runs (the mode's start path).
  /// Concurrent callers share one start; if it fails they all get its error.
  Task<Result<std::shared_ptr<ActorInstance>>> start(SpecFactory make_spec);
  /// Stops the running instance and waits until it stopped. After a destroy the slot answers
  /// actor.not_found.
  Task<void> stop(StopReason reason);
  /// (Any thread.)
  bool destroyed() const { return destroyed_.load(); }

  /// Runs `command` on the current instance, or on the next one (see the file comment). With
  /// `generation`, only on that generation: once it stops (or another runs) the command fails
  /// with generation_gone and never runs.
  Task<Dispatched<Reply>> dispatch(Command command, std::optional<std::uint32_t> generation);

 private:
  // What to wait for: an instance other than `refused_by` that takes `command` (any live one
  // for a connection's end). nullptr (no error): none runs and `wake` is false.
  // One entry per command waiting in the slot: whether it is owed a turn on the instance that
  // started while it waited.
  using Waiter = std::list<bool>::iterator;
  class WaitingTurn;

  Task<Result<std::shared_ptr<ActorInstance>>> next_instance(Waiter waiter,
                                                             const ActorInstance* refused_by,
                                                             bool live_is_enough,
                                                             bool wake,
                                                             util::SteadyTime deadline);
  // The command had its turn (or gave it up): a stop waits for it no longer.
  void settle(Waiter waiter);
  Error waited_too_long(const ActorInstance* refused_by) const;

  std::string actor_id_;
  boost::asio::any_io_executor strand_;
  SlotHost& host_;
  std::shared_ptr<ActorInstance> instance_;
  bool starting_ = false;
  bool stopping_ = false;
  std::atomic<bool> destroyed_{false};
  std::uint64_t attempts_ = 0;
  std::optional<Error> last_error_;
  std::list<bool> waiters_;  // commands waiting for an instance, or being taken by the one found
  std::size_t owed_ = 0;     // of those, how many are owed a turn
  std::shared_ptr<Notifier> changed_;  // shared with the deadline watchers
};

}  // namespace rivetkit::core
