#pragma once
/// The registry: the set of actor definitions an application serves, and the entry point that
/// serves them.
///
///     int main(int argc, char** argv) {
///       rivetkit::Registry registry;
///       registry.add(counter());
///       return registry.run(argc, argv);
///     }
///
/// run() reads the configuration (environment, then flags), starts local mode (or engine mode when
/// an endpoint is configured), serves until SIGINT/SIGTERM, then shuts down gracefully. It is the
/// only rivetkit function that installs signal handlers; embedders use start()/stop() instead.

#include <rivetkit/actor.hpp>
#include <rivetkit/config.hpp>
#include <rivetkit/result.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace rivetkit {

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// Adds a definition. Names must be unique.
  Registry& add(ActorDefinition definition);

  /// Parses flags (--host, --port, --data-dir, --threads, --endpoint, --emit-types, --version,
  /// --help) over the environment, serves until a signal, returns the process exit code.
  /// `--emit-types <file>` writes type_declarations() to the file (`-`: stdout) and exits.
  int run(int argc, char** argv);

  /// A TypeScript declaration file of the actors added so far, for the official client:
  /// `createClient<Registry>()` with each actor's actions (argument and result types from the
  /// C++ signatures and RIVETKIT_FIELDS structs), typed events (`.event<T>(name)`) and queues
  /// (`.queue<Message, Complete>(name)`). typescript.hpp says how C++ types map.
  std::string type_declarations() const;

  /// Starts serving in background threads. Returns once the listener is bound.
  Result<void> start(RegistryConfig config);
  /// The bound port (after start()).
  std::uint16_t port() const;
  /// The bound metrics port (RegistryConfig::metrics_port), or 0 when there is none.
  std::uint16_t metrics_port() const;
  /// Graceful stop: stops accepting, finishes in-flight work within a bounded time, flushes state.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rivetkit
