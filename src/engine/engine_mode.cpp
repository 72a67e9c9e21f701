#include "engine/engine_mode.hpp"

#include "core/ids.hpp"
#include "engine/engine_api.hpp"
#include "engine/envoy_driver.hpp"
#include "engine/envoy_link.hpp"
#include "engine/process_manager.hpp"
#include "util/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include <cstdlib>

namespace rivetkit::engine {

namespace asio = boost::asio;

struct EngineMode::Impl {
  boost::asio::io_context* io = nullptr;
  std::string endpoint;
  std::unique_ptr<EngineProcess> process;
  std::shared_ptr<EnvoyLink> link;
  std::shared_ptr<EnvoyDriver> driver;
};

EngineMode::EngineMode(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EngineMode::~EngineMode() {
  stop();
}

const std::string& EngineMode::endpoint() const {
  return impl_->endpoint;
}

namespace {

template <class T>
Result<T> run_blocking(asio::io_context& io, Task<Result<T>> task) {
  auto future = asio::co_spawn(io, std::move(task), asio::use_future);
  return future.get();
}

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : std::move(fallback);
}

}  // namespace

Result<std::unique_ptr<EngineMode>> EngineMode::start(asio::io_context& io,
                                                      const RegistryConfig& config,
                                                      core::Runtime& runtime) {
  auto impl = std::make_unique<Impl>();
  impl->io = &io;
  impl->endpoint = *config.endpoint;

  // 1. An engine must answer at the endpoint (spawned for loopback endpoints when allowed).
  auto mode = parse_spawn_mode(env_or("RIVETKIT_ENGINE_SPAWN", "auto"));
  if (!mode) {
    return fail(mode.error());
  }
  EngineProcessOptions process_options;
  process_options.endpoint = impl->endpoint;
  process_options.mode = *mode;
  if (const char* bin = std::getenv("RIVET_ENGINE_BINARY_PATH"); bin != nullptr && *bin != '\0') {
    process_options.binary_path = bin;
  }
  process_options.data_dir = config.data_dir;
  auto process = run_blocking(io, EngineProcess::ensure(io.get_executor(), process_options));
  if (!process) {
    return fail(process.error());
  }
  impl->process = std::move(*process);

  // 2. The pool must exist before the envoy connects (§1.1).
  EngineApiOptions api;
  api.endpoint = impl->endpoint;
  api.namespace_name = config.namespace_name;
  api.token = config.token;
  api.pool = config.pool;
  auto pool = run_blocking(io, ensure_runner_config(io.get_executor(), api));
  if (!pool) {
    return fail(pool.error());
  }

  // 3. Connect as an envoy.
  EnvoyLinkOptions link_options;
  link_options.endpoint = impl->endpoint;
  link_options.namespace_name = config.namespace_name;
  link_options.token = config.token;
  link_options.pool = config.pool;
  link_options.envoy_key = core::new_uuid_v4();
  link_options.version = static_cast<std::uint32_t>(
      std::strtoul(env_or("RIVET_ENVOY_VERSION", "1").c_str(), nullptr, 10));
  link_options.actor_names = runtime.actor_names();
  link_options.clock = runtime.config().clock;
  impl->link = std::make_shared<EnvoyLink>(io.get_executor(), std::move(link_options));
  impl->driver = std::make_shared<EnvoyDriver>(io.get_executor(), runtime, impl->link, api);
  impl->driver->start();
  auto connected = run_blocking(io, impl->link->wait_connected(std::chrono::milliseconds(30'000)));
  if (!connected) {
    impl->link->stop();
    return fail(connected.error());
  }
  return std::unique_ptr<EngineMode>(new EngineMode(std::move(impl)));
}

void EngineMode::stop() {
  if (!impl_ || !impl_->driver) {
    return;
  }
  // Bounded by the engine's stop threshold, but never longer than a minute here (§4.6).
  auto limit = std::chrono::milliseconds(
      std::min<std::int64_t>(impl_->link->metadata().actor_stop_threshold, 60'000));
  auto done = asio::co_spawn(*impl_->io, impl_->driver->shutdown(limit), asio::use_future);
  if (done.wait_for(limit + std::chrono::seconds(10)) != std::future_status::ready) {
    log::error("engine-mode shutdown timed out");
  }
  impl_->driver.reset();
  if (impl_->process) {
    impl_->process->stop();
    impl_->process.reset();
  }
}

}  // namespace rivetkit::engine
