#include "util/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <mutex>
#include <string_view>

namespace rivetkit::log {

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto logger = spdlog::stderr_color_mt("rivetkit");
    spdlog::set_default_logger(logger);
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    spdlog::set_level(spdlog::level::info);
    if (const char* lvl = std::getenv("RIVET_LOG_LEVEL"); lvl != nullptr && *lvl != '\0') {
      spdlog::set_level(spdlog::level::from_str(lvl));
    }
  });
}

}  // namespace rivetkit::log
