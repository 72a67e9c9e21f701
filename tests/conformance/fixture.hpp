#pragma once
// The driver-suite fixture: every group of actors (one file in actors/ per fixture file of the
// suite) registers itself here. Shared helpers for the groups live below.

#include <rivetkit/rivetkit.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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
void add_access_control_actors(rivetkit::Registry& registry);
void add_db_actors(rivetkit::Registry& registry);
void add_db_raw_actors(rivetkit::Registry& registry);
void add_db_catalogue_actors(rivetkit::Registry& registry);
void add_db_stress_actors(rivetkit::Registry& registry);
void add_sleep_db_actors(rivetkit::Registry& registry);
void add_queue_actors(rivetkit::Registry& registry);
void add_workflow_actors(rivetkit::Registry& registry);

/// Wall-clock milliseconds since the Unix epoch (JS Date.now()).
inline std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The key's parts joined with '/' (the suite's `c.key.join("/")`).
inline std::string joined_key(const std::vector<std::string>& key) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    out += (i == 0 ? "" : "/") + key[i];
  }
  return out;
}

/// `client.<name>.getOrCreate(key).<action>(arg)` from inside an actor, as the suite's actors
/// report to their observers.
inline rivetkit::Task<void> tell(rivetkit::Client client,
                                 std::string name,
                                 std::vector<std::string> key,
                                 std::string action,
                                 rivetkit::Value arg) {
  auto op = client.get_or_create(std::move(name), std::move(key)).action(std::move(action), arg);
  co_await std::move(op);
}

/// lifecycleObserver.getOrCreate([observer]).recordEvent({actorKey, event}).
inline rivetkit::Task<void> record_lifecycle_event(rivetkit::Client client,
                                                   std::string observer,
                                                   std::string actor_key,
                                                   std::string event) {
  return tell(
      std::move(client), "lifecycleObserver", std::vector<std::string>{std::move(observer)},
      "recordEvent",
      rivetkit::Value::object({{"actorKey", std::move(actor_key)}, {"event", std::move(event)}}));
}

}  // namespace fixture
