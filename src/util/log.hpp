#pragma once
// Logging facade over spdlog. Fields follow the `key=value` convention (actor_id=... action=...)
// so a later move to structured logs is mechanical. Level from RIVET_LOG_LEVEL
// (trace|debug|info|warn|error|off; default info).

#include <spdlog/spdlog.h>

namespace rivetkit::log {

/// Configures the default logger once (stderr, level from the environment). Idempotent.
void init();

using spdlog::debug;
using spdlog::error;
using spdlog::info;
using spdlog::trace;
using spdlog::warn;

}  // namespace rivetkit::log
