// Engine mode as the registry runs it (registry/mode.hpp).

#include "engine/engine_mode.hpp"
#include "registry/mode.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

namespace rivetkit::registry {

namespace {

class EngineModeRunner final : public Mode {
 public:
  EngineModeRunner(boost::asio::io_context& io, RegistryConfig config)
      : io_(io), config_(std::move(config)) {}

  const char* name() const override { return "engine"; }

  Result<void> start(core::Runtime& runtime) override {
    auto engine = engine::EngineMode::start(io_, config_, runtime);
    if (!engine) {
      return fail(engine.error());
    }
    engine_ = std::move(*engine);
    return {};
  }

  void stop(core::Runtime&) override {
    log::info("shutting down: the engine moves every actor away");
    engine_->stop();
    engine_.reset();  // while the I/O threads still run
  }

  std::string describe(std::size_t actor_types) const override {
    return fmt::format("engine mode: envoy of {} (namespace {}, pool {}, {} actor type(s))",
                       config_.endpoint.value_or(""), config_.namespace_name, config_.pool,
                       actor_types);
  }

 private:
  boost::asio::io_context& io_;
  RegistryConfig config_;
  std::unique_ptr<engine::EngineMode> engine_;
};

}  // namespace

std::unique_ptr<Mode> engine_mode(boost::asio::io_context& io, const RegistryConfig& config) {
  return std::make_unique<EngineModeRunner>(io, config);
}

}  // namespace rivetkit::registry
