#pragma once
// Settings the runtime shares with every actor instance.

#include <cstddef>
#include <memory>

#include "util/clock.hpp"

namespace rivetkit::core {

struct RuntimeConfig {
  std::size_t max_incoming_message_size = 65'536;
  std::size_t max_outgoing_message_size = 1'048'576;
  /// Every timer of the runtime; tests substitute a util::ManualClock.
  std::shared_ptr<util::Clock> clock = std::make_shared<util::SystemClock>();
};

}  // namespace rivetkit::core
