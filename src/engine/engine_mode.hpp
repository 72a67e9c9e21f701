#pragma once
// Engine mode as the registry starts it (envoy-protocol.md §1, §7): make sure an engine answers at
// the endpoint (starting one for a loopback endpoint when RIVETKIT_ENGINE_SPAWN allows), make sure
// the namespace's pool exists, then connect as an envoy and serve the actors the engine places
// here through the same runtime and router as local mode.

#include "core/runtime.hpp"
#include <rivetkit/config.hpp>
#include <rivetkit/result.hpp>

#include <boost/asio/io_context.hpp>

#include <memory>

namespace rivetkit::engine {

class EngineMode {
 public:
  /// Blocks until the envoy is connected (or fails). `io` must already be run by worker threads.
  static Result<std::unique_ptr<EngineMode>> start(boost::asio::io_context& io,
                                                   const RegistryConfig& config,
                                                   core::Runtime& runtime);
  ~EngineMode();

  /// Graceful stop (ToRivetStopping, wait for the engine's stops, bounded), then stops an engine
  /// this process started. Blocks.
  void stop();
  const std::string& endpoint() const;

 private:
  struct Impl;
  explicit EngineMode(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rivetkit::engine
