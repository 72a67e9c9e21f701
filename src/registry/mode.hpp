#pragma once
// A way to run the registry: local mode (this process is the endpoint, data in SQLite) or engine
// mode (an envoy of a Rivet Engine). The registry starts both through one path (registry.cpp):
// the I/O context and its threads, the runtime, then the mode; and stops them in the reverse
// order. A mode holds what differs: its front door or envoy, its driver and its storage.

#include "core/runtime.hpp"
#include <rivetkit/config.hpp>
#include <rivetkit/result.hpp>

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace rivetkit::registry {

class Mode {
 public:
  virtual ~Mode() = default;
  /// What create_vars learns about the driver (DriverContext::name).
  virtual const char* name() const = 0;
  /// Starts serving; the I/O threads run already. Blocks until ready (or failed).
  virtual Result<void> start(core::Runtime& runtime) = 0;
  /// The graceful stop, bounded; the I/O threads still run. Afterwards the registry stops the
  /// threads, destroys the mode, then the runtime.
  virtual void stop(core::Runtime& runtime) = 0;
  /// The port clients connect to (local mode), else 0.
  virtual std::uint16_t port() const { return 0; }
  /// One line for the log once started.
  virtual std::string describe(std::size_t actor_types) const = 0;
};

/// Local mode: opens the data directory's store (an error if it cannot).
Result<std::unique_ptr<Mode>> local_mode(boost::asio::io_context& io, const RegistryConfig& config);
/// Engine mode (config.endpoint is set).
std::unique_ptr<Mode> engine_mode(boost::asio::io_context& io, const RegistryConfig& config);
/// Serverless mode (config.serverless): the engine starts actors here through `/start`.
std::unique_ptr<Mode> serverless_mode(boost::asio::io_context& io, const RegistryConfig& config);

}  // namespace rivetkit::registry
