#pragma once
// Logging facade over spdlog. Runtime messages carry their fields in the text, `key=value`
// (actor_id=... action=...); code that has fields apart from its message (an actor's c.log())
// passes them to log::write. Two formats (RIVET_LOG_FORMAT): text (the default, one line per
// message, fields appended as key=value) and json (one JSON object per line: ts, level, msg,
// then every field, with the key=value fields of runtime messages lifted out of the text).
// Timestamps are UTC. Level from RIVET_LOG_LEVEL (trace|debug|info|warn|error|off; default
// info).

#include <spdlog/spdlog.h>

#include <optional>
#include <span>
#include <string_view>

namespace rivetkit::log {

/// The level a RIVET_LOG_LEVEL value names: RivetKit's names in any case (trace, debug, info,
/// warn or warning, error or fatal, off); nullopt for anything else.
std::optional<spdlog::level::level_enum> parse_level(std::string_view name);

enum class Format { kText, kJson };
/// The format a RIVET_LOG_FORMAT value names (text or json, any case); nullopt otherwise.
std::optional<Format> parse_format(std::string_view name);

/// Configures the default logger once (stderr; level and format from the environment; an
/// unknown value keeps the default, with a warning: Registry::run refuses it before).
/// Idempotent.
void init();

/// One structured field of a message (JSON: a member; text: ` key=value` after the message).
struct Field {
  std::string_view key;
  std::string_view value;
};

/// Logs `message` with `fields` at `level`.
void write(spdlog::level::level_enum level,
           std::span<const Field> fields,
           std::string_view message);

/// The JSON line of one message (the json format; exposed for its unit test). `extra` are the
/// caller's fields; `key=value` tokens of `message` whose key is snake_case become camelCase
/// members (actor_id -> actorId) unless a field already has that name.
std::string json_line(std::string_view utc_timestamp,
                      spdlog::level::level_enum level,
                      std::string_view message,
                      std::span<const Field> extra);

using spdlog::debug;
using spdlog::error;
using spdlog::info;
using spdlog::trace;
using spdlog::warn;

}  // namespace rivetkit::log
