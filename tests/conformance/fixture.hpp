#pragma once
// The driver-suite fixture: every group of actors (one file in actors/ per fixture file of the
// suite) registers itself here. Shared helpers for the groups live below.

#include <rivetkit/rivetkit.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace fixture {

// One function per actors/<group>.cpp; main.cpp calls them all.
void add_counter_actors(rivetkit::Registry& registry);
void add_request_access_actors(rivetkit::Registry& registry);
void add_raw_http_actors(rivetkit::Registry& registry);
void add_raw_websocket_actors(rivetkit::Registry& registry);
void add_hibernation_actors(rivetkit::Registry& registry);
void add_destroy_actors(rivetkit::Registry& registry);
void add_start_stop_race_actors(rivetkit::Registry& registry);
void add_save_state_actors(rivetkit::Registry& registry);
void add_scheduled_actors(rivetkit::Registry& registry);
void add_run_actors(rivetkit::Registry& registry);
void add_sleep_actors(rivetkit::Registry& registry);
void add_counter_variant_actors(rivetkit::Registry& registry);
void add_action_actors(rivetkit::Registry& registry);
void add_error_actors(rivetkit::Registry& registry);
void add_state_actors(rivetkit::Registry& registry);
void add_connection_actors(rivetkit::Registry& registry);
void add_lifecycle_hook_actors(rivetkit::Registry& registry);
void add_warmup_actors(rivetkit::Registry& registry);
void add_kv_actors(rivetkit::Registry& registry);

/// Wall-clock milliseconds since the Unix epoch (JS Date.now()).
inline std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace fixture
