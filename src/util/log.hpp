#pragma once
// Logging facade over spdlog. Fields follow the `key=value` convention (actor_id=... action=...)
// so a later move to structured logs is mechanical. Level from RIVET_LOG_LEVEL
// (trace|debug|info|warn|error|off; default info).

#include <spdlog/spdlog.h>

#include <optional>
#include <string_view>

namespace rivetkit::log {

/// The level a RIVET_LOG_LEVEL value names: RivetKit's names in any case (trace, debug, info,
/// warn or warning, error or fatal, off); nullopt for anything else.
std::optional<spdlog::level::level_enum> parse_level(std::string_view name);

/// Configures the default logger once (stderr, level from the environment; an unknown level
/// keeps info, with a warning: Registry::run refuses it before). Idempotent.
void init();

using spdlog::debug;
using spdlog::error;
using spdlog::info;
using spdlog::trace;
using spdlog::warn;

}  // namespace rivetkit::log
