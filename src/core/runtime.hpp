#pragma once
// Runtime: the set of actor definitions and the running instances (rivetkit-core's
// RegistryDispatcher). Drivers (local mode, engine mode) ask it for an instance; it starts the
// instance on first use and hands the same instance to every concurrent caller.
//
// Each actor id gets a slot (core/runtime/actor_slot.hpp) with its own strand; starting, stopping
// and every use of the instance happen on that strand. Work reaches an actor through one entry
// point, dispatch(): a command that arrives while an instance starts or stops waits in the slot,
// then runs on the next instance (the stop was not asked for by that client, so its work is not
// failed); a sleeping actor is woken through the mode's Waker. A destroyed actor's slot answers
// actor.not_found until the driver has wiped its data and calls forget(). All public functions
// are thread-safe.

#include "core/actor_instance.hpp"
#include "core/runtime/actor_slot.hpp"
#include "core/runtime/command.hpp"
#include "core/runtime_config.hpp"
#include <rivetkit/actor.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rivetkit::core {

class Runtime final : private SlotHost {
 public:
  using SpecFactory = ActorSlot::SpecFactory;
  /// How the mode wakes a sleeping actor (see SlotHost::wake).
  using Waker = std::function<Task<Result<void>>(std::string actor_id)>;

  Runtime(boost::asio::io_context& io,
          RuntimeConfig config,
          std::vector<ActorDefinition> definitions);
  ~Runtime();

  const RuntimeConfig& config() const { return config_; }
  /// The executor of the runtime's I/O context (its threads).
  boost::asio::any_io_executor executor() const { return io_.get_executor(); }
  std::shared_ptr<const detail::ActorDefinitionData> definition(std::string_view name) const;
  std::vector<std::string> actor_names() const;

  /// Set once by the mode before it serves.
  void set_waker(Waker waker) { waker_ = std::move(waker); }

  /// Hands `command` to the actor (see the file comment); the reply, or the error that refused
  /// or failed it, with the instance that ran it. With `generation` (engine mode: a request the
  /// gateway sent to that generation, which it retries itself if the generation stops), only
  /// that generation runs it; otherwise generation_gone.
  Task<Dispatched<Reply>> dispatch(std::string actor_id,
                                   Command command,
                                   std::optional<std::uint32_t> generation = std::nullopt);
  /// dispatch() for one command type, answering its own reply type.
  template <class C>
  Task<Dispatched<typename C::Reply>> dispatch(
      std::string actor_id, C command, std::optional<std::uint32_t> generation = std::nullopt) {
    auto op = dispatch(std::move(actor_id), Command(std::move(command)), generation);
    auto d = co_await std::move(op);
    if (!d.result) {
      co_return Dispatched<typename C::Reply>{fail(d.result.error()), std::move(d.instance)};
    }
    co_return Dispatched<typename C::Reply>{std::get<typename C::Reply>(std::move(*d.result)),
                                            std::move(d.instance)};
  }

  /// The started instance of `actor_id`, starting it with `make_spec` if it is not running.
  /// Concurrent callers share one start; if it fails they all get its error (and a later call
  /// tries again).
  Task<Result<std::shared_ptr<ActorInstance>>> acquire(std::string actor_id, SpecFactory make_spec);

  /// Stops the running instance (sleep or destroy) and waits until it has stopped. After a
  /// destroy the slot answers actor.not_found until forget().
  Task<void> stop(std::string actor_id, StopReason reason);
  /// Drops the memory of a destroyed actor (its data is gone).
  void forget(const std::string& actor_id);

  /// Refuses new work and stops (sleeps) every instance, concurrently; returns when all stopped.
  Task<void> shutdown();
  bool shutting_down() const;

  /// Number of actor ids with a slot (running, starting or stopping instances).
  std::size_t slot_count() const;

 private:
  struct Slot;
  std::shared_ptr<Slot> slot_for(const std::string& actor_id, bool create);
  void release_user(const std::shared_ptr<Slot>& slot);

  // SlotHost
  const RuntimeConfig& slot_config() const override { return config_; }
  bool slot_shutting_down() const override { return shutting_down(); }
  Task<Result<void>> wake(std::string actor_id) override;

  boost::asio::io_context& io_;
  RuntimeConfig config_;
  std::map<std::string, std::shared_ptr<const detail::ActorDefinitionData>, std::less<>>
      definitions_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>, std::less<>> slots_;
  bool shutting_down_ = false;
  Waker waker_;
};

}  // namespace rivetkit::core
