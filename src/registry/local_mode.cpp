// Local mode as the registry runs it (registry/mode.hpp).

#include "local/local_server.hpp"
#include "registry/mode.hpp"
#include "storage/local_store.hpp"
#include "util/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <fmt/format.h>

#include <chrono>
#include <future>
#include <thread>

namespace rivetkit::registry {

namespace {

class LocalMode final : public Mode {
 public:
  LocalMode(boost::asio::io_context& io,
            RegistryConfig config,
            std::shared_ptr<storage::LocalStore> store)
      : io_(io), config_(std::move(config)), store_(std::move(store)) {}
  ~LocalMode() override {
    server_.reset();
    store_->close();
  }

  const char* name() const override { return "local"; }

  Result<void> start(core::Runtime& runtime) override {
    server_ = std::make_unique<local::LocalServer>(io_, config_, runtime, store_);
    auto port = server_->start();
    if (!port) {
      server_.reset();
      return fail(port.error());
    }
    port_ = *port;
    return {};
  }

  void stop(core::Runtime& runtime) override {
    log::info("shutting down: no new work; every awake actor goes to sleep");
    // 1. No new work and no more alarms: new requests are answered "going away" (the listener
    // stays open until the end: a refused reconnect makes RivetKit's client give up for good).
    server_->drain();
    // 2. Every awake actor sleeps: on_sleep runs, in-flight work drains within the grace period,
    // state is flushed. Bounded, so a stuck handler cannot hold the exit for ever (a second
    // signal exits at once).
    auto done = boost::asio::co_spawn(io_, runtime.shutdown(), boost::asio::use_future);
    if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      log::error("shutdown timed out waiting for actors to sleep");
    }
    // 3. Every socket still open (hibernatable ones included) gets RivetKit's going-away close so
    // that clients reconnect to the next process, and the I/O runs until those closes are
    // written and answered (bounded): stopping it at once would drop them unsent, which clients
    // see as 1006 and do not reconnect after.
    server_->close_all();
    const auto closes_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (server_->open_connections() > 0 && std::chrono::steady_clock::now() < closes_deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (auto left = server_->open_connections(); left > 0) {
      log::warn("shutdown: {} connection(s) did not finish closing in time", left);
    }
    server_->stop();
  }

  std::uint16_t port() const override { return port_; }

  std::string describe(std::size_t actor_types) const override {
    return fmt::format("local mode on http://{}:{} (data in {}, {} actor type(s))", config_.host,
                       port_, config_.data_dir, actor_types);
  }

 private:
  boost::asio::io_context& io_;
  RegistryConfig config_;
  std::shared_ptr<storage::LocalStore> store_;
  std::unique_ptr<local::LocalServer> server_;
  std::uint16_t port_ = 0;
};

}  // namespace

Result<std::unique_ptr<Mode>> local_mode(boost::asio::io_context& io,
                                         const RegistryConfig& config) {
  storage::LocalStoreOptions store_options;
  store_options.synchronous_full = config.fsync;
  auto store = storage::LocalStore::open(config.data_dir, store_options);
  if (!store) {
    return fail(store.error());
  }
  return std::unique_ptr<Mode>(std::make_unique<LocalMode>(io, config, *store));
}

}  // namespace rivetkit::registry
