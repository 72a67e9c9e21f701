// rivetkit_driver_fixture: the actors of Rivet's driver test suite, served in engine mode when
// the suite's harness starts it (../shared/conformance/contract.md §5.1) and in local mode
// otherwise (--port/--data-dir or the usual environment).
//
// The harness names its engine and pool with RIVETKIT_TEST_ENDPOINT and RIVETKIT_TEST_POOL_NAME;
// they are mapped onto the registry's own settings (RIVET_ENDPOINT, RIVET_POOL) unless those are
// set, so no wrapper script is needed. RIVET_TOKEN and RIVET_NAMESPACE are the registry's own.

#include "fixture.hpp"

#include <cstdlib>

namespace {

void map_env(const char* from, const char* to) {
  const char* value = std::getenv(from);
  if (value != nullptr && *value != '\0' && std::getenv(to) == nullptr) {
    ::setenv(to, value, 0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread starts: setenv is not thread-safe.
  map_env("RIVETKIT_TEST_ENDPOINT", "RIVET_ENDPOINT");
  map_env("RIVETKIT_TEST_POOL_NAME", "RIVET_POOL");
  // A test fixture: RivetKit's test mode (the raw-WebSocket ack-state probe the suite reads).
  ::setenv("RIVETKIT_TEST_MODE", "1", 0);
  if (std::getenv("RIVETKIT_TEST_ENDPOINT") != nullptr) {
    // The suite's engine is always running; never start another.
    ::setenv("RIVETKIT_ENGINE_SPAWN", "never", 0);
  }

  rivetkit::Registry registry;
  fixture::add_counter_actors(registry);
  fixture::add_request_access_actors(registry);
  fixture::add_raw_http_actors(registry);
  fixture::add_raw_websocket_actors(registry);
  fixture::add_hibernation_actors(registry);
  fixture::add_destroy_actors(registry);
  fixture::add_start_stop_race_actors(registry);
  fixture::add_save_state_actors(registry);
  fixture::add_scheduled_actors(registry);
  fixture::add_run_actors(registry);
  fixture::add_sleep_actors(registry);
  fixture::add_counter_variant_actors(registry);
  fixture::add_action_actors(registry);
  fixture::add_error_actors(registry);
  fixture::add_state_actors(registry);
  fixture::add_connection_actors(registry);
  fixture::add_lifecycle_hook_actors(registry);
  fixture::add_warmup_actors(registry);
  fixture::add_kv_actors(registry);
  fixture::add_db_actors(registry);
  fixture::add_db_raw_actors(registry);
  fixture::add_db_catalogue_actors(registry);
  fixture::add_sleep_db_actors(registry);
  fixture::add_queue_actors(registry);
  fixture::add_workflow_actors(registry);
  fixture::add_db_stress_actors(registry);
  fixture::add_access_control_actors(registry);
  return registry.run(argc, argv);
}
