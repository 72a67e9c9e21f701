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

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto logger = spdlog::stderr_color_mt("rivetkit");
    spdlog::set_default_logger(logger);
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    spdlog::set_level(spdlog::level::info);
    if (const char* lvl = std::getenv("RIVET_LOG_LEVEL"); lvl != nullptr && *lvl != '\0') {
      // RivetKit's names in any case (the driver suite sets DEBUG); anything unknown keeps info
      // rather than silencing the log (spdlog maps unknown names to off).
      std::string name(lvl);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (name == "warning") {
        name = "warn";
      } else if (name == "error" || name == "fatal") {
        name = "err";
      }
      auto level = spdlog::level::from_str(name);
      if (level == spdlog::level::off && name != "off") {
        std::fprintf(stderr, "RIVET_LOG_LEVEL=%s is not a log level; using info\n", lvl);
        level = spdlog::level::info;
      }
      spdlog::set_level(level);
    }
  });
}

}  // namespace rivetkit::log
