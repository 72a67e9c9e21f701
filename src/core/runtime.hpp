#pragma once
// Runtime: the set of actor definitions and the running instances (rivetkit-core's
// RegistryDispatcher). Drivers (local mode, engine mode) ask it for an instance; it starts the
// instance on first use and hands the same instance to every concurrent caller.
//
// Each actor id gets a slot with its own strand; starting, and every later use of the instance,
// happen on that strand. acquire() is thread-safe.

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

  /// Stops and forgets the instance, if running (its final save completes first).
  Task<void> release(std::string actor_id);

  /// Stops every instance (final saves complete). Further acquire() calls fail.
  Task<void> shutdown();

  std::size_t running_count() const;

 private:
  struct Slot;
  std::shared_ptr<Slot> slot_for(const std::string& actor_id);
  static Task<Result<std::shared_ptr<ActorInstance>>> acquire_on_slot(std::shared_ptr<Slot> slot,
                                                                       SpecFactory make_spec,
                                                                       const RuntimeConfig* config);

  boost::asio::io_context& io_;
  RuntimeConfig config_;
  std::map<std::string, std::shared_ptr<const detail::ActorDefinitionData>, std::less<>> definitions_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>, std::less<>> slots_;
  bool shutting_down_ = false;
};

}  // namespace rivetkit::core
