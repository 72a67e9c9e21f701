#pragma once
// Settings the runtime shares with every actor instance.

#include "util/clock.hpp"
#include <rivetkit/driver_context.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace rivetkit::core {

struct RuntimeConfig {
  std::size_t max_incoming_message_size = 65'536;
  std::size_t max_outgoing_message_size = 1'048'576;
  /// What create_vars learns about the driver (mode, test mode).
  DriverContext driver;
  /// Test mode (RegistryConfig::test_mode): the raw-WebSocket ack-state probe is answered.
  bool test_mode = false;
  /// Commands one actor holds while it starts, stops or wakes; past it they fail with
  /// actor.overloaded (core/runtime/actor_slot.hpp).
  std::size_t max_waiting_commands = 1024;
  /// How long a command waits for an instance that takes it.
  std::chrono::milliseconds instance_wait = std::chrono::seconds(30);
  /// The inspector (core/inspector): served at all (RIVET_INSPECTOR_DISABLE=1 turns it off), and
  /// the token every actor accepts instead of its own (_RIVET_TEST_INSPECTOR_TOKEN, tests only).
  bool inspector_enabled = true;
  std::optional<std::string> inspector_test_token;
  /// Every timer of the runtime; tests substitute a util::ManualClock.
  std::shared_ptr<util::Clock> clock = std::make_shared<util::SystemClock>();
};

}  // namespace rivetkit::core
