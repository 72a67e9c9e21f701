#pragma once
// Runtime: the set of actor definitions and the running instances (rivetkit-core's
// RegistryDispatcher). Drivers (local mode, engine mode) ask it for an instance; it starts the
// instance on first use and hands the same instance to every concurrent caller.
//
// Each actor id gets a slot with its own strand; starting, stopping and every use of the instance
// happen on that strand. Work that arrives while an instance is stopping waits, then runs on the
// next instance (the stop was not asked for by that client, so its work is not failed). A
// destroyed actor's slot answers actor.not_found until the driver has wiped its data and calls
// forget(). All public functions are thread-safe.

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

#include "core/actor_instance.hpp"
#include "core/runtime_config.hpp"

namespace rivetkit::core {

class Runtime {
 public:
  using SpecFactory = std::function<Task<Result<ActorInstance::Spec>>()>;

  Runtime(boost::asio::io_context& io, RuntimeConfig config,
          std::vector<ActorDefinition> definitions);
  ~Runtime();

  const RuntimeConfig& config() const { return config_; }
  std::shared_ptr<const detail::ActorDefinitionData> definition(std::string_view name) const;
  std::vector<std::string> actor_names() const;

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
  void release_user(const std::string& actor_id, const std::shared_ptr<Slot>& slot);
  static Task<Result<std::shared_ptr<ActorInstance>>> acquire_on_slot(std::shared_ptr<Slot> slot,
                                                                       SpecFactory make_spec,
                                                                       Runtime* runtime);
  static Task<void> stop_on_slot(std::shared_ptr<Slot> slot, StopReason reason);

  boost::asio::io_context& io_;
  RuntimeConfig config_;
  std::map<std::string, std::shared_ptr<const detail::ActorDefinitionData>, std::less<>> definitions_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>, std::less<>> slots_;
  bool shutting_down_ = false;
};

}  // namespace rivetkit::core
