#include "core/actor/state_record.hpp"

#include "core/actor/stored_value.hpp"
#include "util/log.hpp"
#include <rivetkit/error.hpp>

namespace rivetkit::core {

std::string StateRecord::encode(const detail::UserActorData& data) {
  return encode_stored(data.state_to_value());
}

std::optional<std::string> StateRecord::take_changed(const detail::UserActorData& data) {
  try {
    std::string bytes = encode(data);
    if (last_ && *last_ == bytes) {
      return std::nullopt;
    }
    last_ = bytes;
    return bytes;
  } catch (const std::exception& e) {
    log::error("state serialization failed actor_id={}: {}", actor_id_, e.what());
    return std::nullopt;
  }
}

void StateRecord::run_on_change(const std::function<void(detail::ActorApi*)>& hook,
                                detail::ActorApi* api) {
  if (!hook || in_on_change_) {
    return;
  }
  in_on_change_ = true;
  try {
    hook(api);
  } catch (const std::exception& e) {
    log::warn("onStateChange failed actor_id={}: {}", actor_id_, e.what());
  }
  in_on_change_ = false;
}

void StateRecord::check_writable() const {
  if (in_on_change_) {
    throw ActorError(Error{"actor", "state_mutation_reentrant",
                           "Actor state mutation is re-entrant: onStateChange may not change the "
                           "state",
                           std::nullopt, false});
  }
}

}  // namespace rivetkit::core
