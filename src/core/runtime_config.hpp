#pragma once
// Settings the runtime shares with every actor instance.

#include <cstddef>

namespace rivetkit::core {

struct RuntimeConfig {
  std::size_t max_incoming_message_size = 65'536;
  std::size_t max_outgoing_message_size = 1'048'576;
};

}  // namespace rivetkit::core
