// rivetkit::Registry: collects definitions, reads the configuration, and runs the chosen mode.

#include "core/runtime.hpp"
#include "engine/engine_mode.hpp"
#include "local/local_server.hpp"
#include "storage/local_store.hpp"
#include "util/log.hpp"
#include <rivetkit/registry.hpp>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>

#include <csignal>
#include <cstdio>
#include <future>
#include <iostream>
#include <map>
#include <thread>
#include <vector>

namespace rivetkit {

namespace asio = boost::asio;

struct Registry::Impl {
  std::vector<ActorDefinition> definitions;
  RegistryConfig config;
  std::unique_ptr<asio::io_context> io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::unique_ptr<core::Runtime> runtime;
  std::shared_ptr<storage::LocalStore> store;
  std::unique_ptr<local::LocalServer> server;
  std::unique_ptr<engine::EngineMode> engine;
  std::uint16_t port = 0;
  bool running = false;

  /// Stops the I/O threads once their work is done (or abandoned) and joins them.
  void stop_threads() {
    work.reset();
    io->stop();
    for (auto& t : threads) {
      t.join();
    }
    threads.clear();
  }
};

Registry::Registry() : impl_(std::make_unique<Impl>()) {}

Registry::~Registry() {
  stop();
}

Registry& Registry::add(ActorDefinition definition) {
  for (const auto& d : impl_->definitions) {
    if (d.name() == definition.name()) {
      throw std::invalid_argument("duplicate actor name: " + definition.name());
    }
  }
  impl_->definitions.push_back(std::move(definition));
  return *this;
}

Result<void> Registry::start(RegistryConfig config) {
  log::init();
  if (impl_->running) {
    return fail(Error{"registry", "already_running", "The registry is already running", {}, true});
  }
  impl_->config = config;
  if (config.endpoint) {
    return start_engine_mode(config);
  }
  storage::LocalStoreOptions store_options;
  store_options.synchronous_full = config.fsync;
  auto store = storage::LocalStore::open(config.data_dir, store_options);
  if (!store) {
    return fail(store.error());
  }
  impl_->store = *store;
  impl_->io = std::make_unique<asio::io_context>();
  impl_->work.emplace(impl_->io->get_executor());
  core::RuntimeConfig runtime_config;
  runtime_config.max_incoming_message_size = config.max_incoming_message_size;
  runtime_config.max_outgoing_message_size = config.max_outgoing_message_size;
  runtime_config.test_mode = config.test_mode;
  runtime_config.driver = DriverContext{"local", config.test_mode};
  impl_->runtime = std::make_unique<core::Runtime>(*impl_->io, runtime_config, impl_->definitions);
  impl_->server =
      std::make_unique<local::LocalServer>(*impl_->io, config, *impl_->runtime, impl_->store);
  auto port = impl_->server->start();
  if (!port) {
    impl_->server.reset();
    impl_->runtime.reset();
    impl_->store->close();
    return fail(port.error());
  }
  impl_->port = *port;
  unsigned threads = config.worker_threads != 0 ? config.worker_threads
                                                : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < threads; ++i) {
    impl_->threads.emplace_back([io = impl_->io.get()] { io->run(); });
  }
  impl_->running = true;
  log::info("local mode on http://{}:{} (data in {}, {} actor type(s))", config.host, impl_->port,
            config.data_dir, impl_->definitions.size());
  return {};
}

Result<void> Registry::start_engine_mode(const RegistryConfig& config) {
  impl_->io = std::make_unique<asio::io_context>();
  impl_->work.emplace(impl_->io->get_executor());
  core::RuntimeConfig runtime_config;
  runtime_config.max_incoming_message_size = config.max_incoming_message_size;
  runtime_config.max_outgoing_message_size = config.max_outgoing_message_size;
  runtime_config.test_mode = config.test_mode;
  runtime_config.driver = DriverContext{"engine", config.test_mode};
  impl_->runtime = std::make_unique<core::Runtime>(*impl_->io, runtime_config, impl_->definitions);
  unsigned threads = config.worker_threads != 0 ? config.worker_threads
                                                : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < threads; ++i) {
    impl_->threads.emplace_back([io = impl_->io.get()] { io->run(); });
  }
  auto engine = engine::EngineMode::start(*impl_->io, config, *impl_->runtime);
  if (!engine) {
    impl_->stop_threads();
    impl_->runtime.reset();
    impl_->io.reset();
    return fail(engine.error());
  }
  impl_->engine = std::move(*engine);
  impl_->running = true;
  log::info("engine mode: envoy of {} (namespace {}, pool {}, {} actor type(s))", *config.endpoint,
            config.namespace_name, config.pool, impl_->definitions.size());
  return {};
}

std::uint16_t Registry::port() const {
  return impl_->port;
}

void Registry::stop() {
  if (!impl_ || !impl_->running) {
    return;
  }
  impl_->running = false;
  if (impl_->engine) {
    log::info("shutting down: the engine moves every actor away");
    impl_->engine->stop();
    impl_->engine.reset();
    impl_->stop_threads();
    impl_->runtime.reset();
    impl_->io.reset();
    return;
  }
  log::info("shutting down: no new work; every awake actor goes to sleep");
  // 1. No new work and no more alarms: new requests are answered "going away" (the listener
  // stays open until the end: a refused reconnect makes RivetKit's client give up for good).
  impl_->server->drain();
  // 2. Every awake actor sleeps: on_sleep runs, in-flight work drains within the grace period,
  // state is flushed. Bounded, so a stuck handler cannot hold the exit for ever (a second signal
  // exits at once).
  auto done = asio::co_spawn(*impl_->io, impl_->runtime->shutdown(), asio::use_future);
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    log::error("shutdown timed out waiting for actors to sleep");
  }
  // 3. Every socket still open (hibernatable ones included) gets RivetKit's going-away close so
  // that clients reconnect to the next process, and the I/O runs until those closes are written
  // and answered (bounded): stopping it at once would drop them unsent, which clients see as
  // 1006 and do not reconnect after.
  impl_->server->close_all();
  const auto closes_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (impl_->server->open_connections() > 0
         && std::chrono::steady_clock::now() < closes_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (auto left = impl_->server->open_connections(); left > 0) {
    log::warn("shutdown: {} connection(s) did not finish closing in time", left);
  }
  impl_->server->stop();
  impl_->stop_threads();
  impl_->server.reset();
  impl_->runtime.reset();
  impl_->store->close();
  impl_->io.reset();
}

int Registry::run(int argc, char** argv) {
  log::init();
  auto env = RegistryConfig::from_env();
  if (!env) {
    std::cerr << "configuration error: " << env.error().message << "\n";
    return 2;
  }
  RegistryConfig config = *env;
  CLI::App app{"rivetkit-cpp actor server"};
  app.add_option("--host", config.host, "Listen address (RIVETKIT_HOST)");
  app.add_option("--port", config.port, "Listen port, 0 for any (RIVETKIT_PORT)");
  app.add_option("--data-dir", config.data_dir, "Data directory (RIVETKIT_DATA_DIR)");
  app.add_option("--threads", config.worker_threads, "Worker threads, 0 = one per core");
  std::string endpoint;
  app.add_option("--endpoint", endpoint, "Rivet Engine endpoint (RIVET_ENDPOINT): engine mode");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!endpoint.empty()) {
    config.endpoint = endpoint;
  }

  // Block the signals in every thread before any is started, then wait for them here.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto started = start(config);
  if (!started) {
    log::error("{}", started.error().message);
    return 1;
  }
  // Printed whatever the log level: scripts and tests wait for this line.
  if (config.endpoint) {
    std::printf("envoy connected to %s\n", config.endpoint->c_str());
  } else {
    std::printf("listening on http://%s:%u\n", config.host.c_str(), static_cast<unsigned>(port()));
  }
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  log::info("received {}, stopping gracefully (send again to force)",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
  // A second signal during the graceful stop forces the exit.
  std::thread force([signals]() mutable {
    int again = 0;
    sigwait(&signals, &again);
    log::warn("second signal: exiting immediately");
    std::_Exit(130);
  });
  force.detach();
  stop();
  return 0;
}

}  // namespace rivetkit
