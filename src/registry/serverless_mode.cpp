// Serverless mode as the registry runs it (registry/mode.hpp, serverless/serverless_server.hpp).

#include "registry/mode.hpp"
#include "serverless/serverless_server.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

namespace rivetkit::registry {

namespace {

class ServerlessModeRunner final : public Mode {
 public:
  ServerlessModeRunner(boost::asio::io_context& io, RegistryConfig config)
      : io_(io), config_(std::move(config)) {}

  const char* name() const override { return "serverless"; }

  Result<void> start(core::Runtime& runtime) override {
    serverless::ServerlessOptions options;
    options.base_path = config_.serverless_base_path;
    options.expected.endpoint = config_.endpoint;
    options.expected.namespace_name = config_.namespace_name;
    options.token = config_.token;
    options.metadata.actor_names = runtime.actor_names();
    options.metadata.client_endpoint = config_.public_endpoint;
    server_ = std::make_unique<serverless::ServerlessServer>(io_, runtime, std::move(options));
    auto port = server_->listen(config_.host, config_.port);
    if (!port) {
      server_.reset();
      return fail(port.error());
    }
    port_ = *port;
    return {};
  }

  void stop(core::Runtime&) override {
    log::info("shutting down: the engine moves every actor away");
    server_->stop();
    server_.reset();  // while the I/O threads still run
  }

  std::uint16_t port() const override { return port_; }

  std::string describe(std::size_t actor_types) const override {
    return fmt::format(
        "serverless mode: listening on http://{}:{}{} for the engine's starts ({} actor "
        "type(s))",
        config_.host, port_, config_.serverless_base_path, actor_types);
  }

 private:
  boost::asio::io_context& io_;
  RegistryConfig config_;
  std::unique_ptr<serverless::ServerlessServer> server_;
  std::uint16_t port_ = 0;
};

}  // namespace

std::unique_ptr<Mode> serverless_mode(boost::asio::io_context& io, const RegistryConfig& config) {
  return std::make_unique<ServerlessModeRunner>(io, config);
}

}  // namespace rivetkit::registry
