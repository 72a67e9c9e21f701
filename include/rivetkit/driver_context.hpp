#pragma once
/// What `create_vars(c, driver)` learns about the driver running the actor (RivetKit passes its
/// driver's context as the second argument of createVars).

#include <string>

namespace rivetkit {

struct DriverContext {
  /// "local" (this process is the endpoint) or "engine" (an envoy of a Rivet Engine).
  std::string mode;
  /// The registry runs in test mode (RegistryConfig::test_mode).
  bool is_test = false;
  /// The region this process runs in (RegistryConfig::region, RIVET_REGION; empty when unset).
  std::string region;
};

}  // namespace rivetkit
