// ActorLog (rivetkit/actor_log.hpp): an actor's log lines, stamped with its name, key and id.
#include "core/keys.hpp"
#include "util/log.hpp"
#include <rivetkit/actor_log.hpp>
#include <rivetkit/detail/runtime_api.hpp>

#include <array>
#include <string>
#include <vector>

namespace rivetkit {

void ActorLog::write(int level, std::string_view message, Fields fields) const {
  static constexpr std::array kLevels{spdlog::level::trace, spdlog::level::debug,
                                      spdlog::level::info, spdlog::level::warn, spdlog::level::err};
  auto spd_level = kLevels.at(static_cast<std::size_t>(level));
  if (!spdlog::default_logger_raw()->should_log(spd_level)) {
    return;
  }
  std::string key = core::serialize_key(api_->key());
  std::vector<log::Field> all;
  all.reserve(fields.size() + 3);
  all.push_back({"actor", api_->name()});
  all.push_back({"key", key});
  all.push_back({"actorId", api_->actor_id()});
  for (const auto& [k, v] : fields) {
    all.push_back({k, v});
  }
  log::write(spd_level, all, message);
}

}  // namespace rivetkit
