#include "util/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

namespace rivetkit::log {

std::optional<spdlog::level::level_enum> parse_level(std::string_view text) {
  std::string name(text);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (name == "warning") {
    name = "warn";
  } else if (name == "error" || name == "fatal") {
    name = "err";
  }
  // spdlog maps every unknown name to off: only "off" itself may mean off.
  auto level = spdlog::level::from_str(name);
  if (level == spdlog::level::off && name != "off") {
    return std::nullopt;
  }
  return level;
}

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto logger = spdlog::stderr_color_mt("rivetkit");
    spdlog::set_default_logger(logger);
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    spdlog::set_level(spdlog::level::info);
    if (const char* lvl = std::getenv("RIVET_LOG_LEVEL"); lvl != nullptr && *lvl != '\0') {
      // Anything unknown keeps info rather than silencing the log.
      auto level = parse_level(lvl);
      if (!level) {
        std::fprintf(stderr, "RIVET_LOG_LEVEL=%s is not a log level; using info\n", lvl);
      }
      spdlog::set_level(level.value_or(spdlog::level::info));
    }
  });
}

}  // namespace rivetkit::log
