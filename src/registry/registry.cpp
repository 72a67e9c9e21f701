// rivetkit::Registry: collects definitions, reads the configuration, and runs the chosen mode.

#include "core/runtime.hpp"
#include "net/metrics_endpoint.hpp"
#include "registry/client_names.hpp"
#include "registry/command_line.hpp"
#include "registry/mode.hpp"
#include "registry/type_declarations.hpp"
#include "util/log.hpp"
#include <rivetkit/registry.hpp>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
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
  std::unique_ptr<registry::Mode> mode;
  std::unique_ptr<net::MetricsServer> metrics;
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
  /// After a failed start or a stop: the mode, then the runtime it used, then the I/O.
  void release() {
    metrics.reset();  // its close is posted to the I/O threads, which still run
    if (!threads.empty()) {
      stop_threads();
    }
    mode.reset();
    runtime.reset();
    io.reset();
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

// Both modes start through this one path: the I/O and its threads, the runtime, the mode.
Result<void> Registry::start(RegistryConfig config) {
  log::init();
  if (impl_->running) {
    return fail(Error{"registry", "already_running", "The registry is already running", {}, true});
  }
  impl_->config = config;
  impl_->io = std::make_unique<asio::io_context>();
  if (config.serverless) {
    impl_->mode = registry::serverless_mode(*impl_->io, config);
  } else if (config.endpoint) {
    impl_->mode = registry::engine_mode(*impl_->io, config);
  } else {
    auto local = registry::local_mode(*impl_->io, config);
    if (!local) {
      impl_->io.reset();
      return fail(local.error());
    }
    impl_->mode = std::move(*local);
  }
  impl_->work.emplace(impl_->io->get_executor());
  core::RuntimeConfig runtime_config;
  runtime_config.max_incoming_message_size = config.max_incoming_message_size;
  runtime_config.max_outgoing_message_size = config.max_outgoing_message_size;
  runtime_config.test_mode = config.test_mode;
  runtime_config.inspector_enabled = config.inspector;
  // Test mode accepts RivetKit's test token `token` (Rivet's driver suite) unless overridden.
  runtime_config.inspector_test_token =
      config.inspector_test_token
          ? config.inspector_test_token
          : (config.test_mode ? std::optional<std::string>("token") : std::nullopt);
  runtime_config.driver = DriverContext{impl_->mode->name(), config.test_mode, config.region};
  impl_->runtime = std::make_unique<core::Runtime>(*impl_->io, runtime_config, impl_->definitions);
  unsigned threads = config.worker_threads != 0 ? config.worker_threads
                                                : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < threads; ++i) {
    impl_->threads.emplace_back([io = impl_->io.get()] { io->run(); });
  }
  auto started = impl_->mode->start(*impl_->runtime);
  if (!started) {
    impl_->release();
    return fail(started.error());
  }
  impl_->port = impl_->mode->port();
  if (config.metrics_port) {
    auto metrics = net::MetricsServer::start(*impl_->io, config.metrics_host.value_or(config.host),
                                             *config.metrics_port, impl_->mode->name());
    if (!metrics) {
      impl_->mode->stop(*impl_->runtime);
      impl_->release();
      return fail(metrics.error());
    }
    impl_->metrics = std::move(*metrics);
  }
  impl_->running = true;
  log::info("{}", impl_->mode->describe(impl_->definitions.size()));
  for (const auto& warning : registry::hidden_action_warnings(impl_->definitions)) {
    log::warn("{}", warning);
  }
  return {};
}

std::string Registry::type_declarations() const {
  return registry::type_declarations(impl_->definitions);
}

std::uint16_t Registry::port() const {
  return impl_->port;
}

std::uint16_t Registry::metrics_port() const {
  return impl_->metrics ? impl_->metrics->port() : 0;
}

void Registry::stop() {
  if (!impl_ || !impl_->running) {
    return;
  }
  impl_->running = false;
  impl_->metrics.reset();
  impl_->mode->stop(*impl_->runtime);
  impl_->release();
}

int Registry::run(int argc, char** argv) {
  // The environment first, the flags over it. A bad environment is reported after the parse, so
  // that --help and --version answer whatever it holds.
  auto env = RegistryConfig::from_env();
  RegistryConfig config = env ? *env : RegistryConfig{};
  CLI::App app{"rivetkit-cpp actor server"};
  app.set_version_flag("--version", command_line::version_text());
  app.footer(command_line::environment_help());
  app.add_option("--host", config.host, "Listen address (RIVETKIT_HOST)");
  app.add_option("--port", config.port, "Listen port, 0 for any (RIVETKIT_PORT)");
  app.add_option("--data-dir", config.data_dir, "Data directory (RIVETKIT_DATA_DIR)");
  std::optional<std::uint16_t> metrics_port_flag;
  app.add_option("--metrics-port", metrics_port_flag,
                 "Also serve Prometheus /metrics on this port, 0 for any (RIVETKIT_METRICS_PORT)");
  std::string metrics_host_flag;
  app.add_option("--metrics-host", metrics_host_flag,
                 "Metrics listen address (RIVETKIT_METRICS_HOST)");
  app.add_option("--threads", config.worker_threads, "Worker threads, 0 = one per core");
  std::string endpoint;
  app.add_option("--endpoint", endpoint, "Rivet Engine endpoint (RIVET_ENDPOINT): engine mode");
  std::string types_file;
  app.add_option("--emit-types", types_file,
                 "Write the actors' TypeScript types (a .d.ts for the official client) to this "
                 "file, - for stdout, and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!types_file.empty()) {
    return command_line::write_types(types_file, type_declarations());
  }
  if (!env) {
    std::cerr << "configuration error: " << env.error().message << "\n";
    return 2;
  }
  if (const char* level = std::getenv("RIVET_LOG_LEVEL");
      level != nullptr && *level != '\0' && !log::parse_level(level)) {
    std::cerr << "configuration error: RIVET_LOG_LEVEL=" << level
              << " is not a log level (trace, debug, info, warn, error or off)\n";
    return 2;
  }
  if (const char* format = std::getenv("RIVET_LOG_FORMAT");
      format != nullptr && *format != '\0' && !log::parse_format(format)) {
    std::cerr << "configuration error: RIVET_LOG_FORMAT=" << format
              << " is not a log format (text or json)\n";
    return 2;
  }
  log::init();
  if (!endpoint.empty()) {
    config.endpoint = endpoint;
  }
  if (metrics_port_flag) {
    config.metrics_port = metrics_port_flag;
  }
  if (!metrics_host_flag.empty()) {
    config.metrics_host = metrics_host_flag;
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
  if (config.serverless) {
    std::printf("listening on http://%s:%u%s (serverless)\n", config.host.c_str(),
                static_cast<unsigned>(port()), config.serverless_base_path.c_str());
  } else if (config.endpoint) {
    std::printf("envoy connected to %s\n", config.endpoint->c_str());
  } else {
    std::printf("listening on http://%s:%u\n", config.host.c_str(), static_cast<unsigned>(port()));
  }
  if (metrics_port() != 0) {
    std::printf("metrics on http://%s:%u/metrics\n",
                config.metrics_host.value_or(config.host).c_str(),
                static_cast<unsigned>(metrics_port()));
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
