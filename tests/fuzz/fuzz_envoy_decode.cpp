// Envoy protocol v8 (protocol/envoy): the engine's messages on the envoy WebSocket and the
// serverless /start body, plus the runtime -> engine direction (what a test double or a
// mis-routed peer could send). One input is tried as all three forms.
// Invariants: decode(encode(m)) == m for every decoded m (the codec is value-exact: floats are
// carried as their 8 bytes), and describe() (used in logs) handles every message.
#include "fuzz_support.hpp"
#include "protocol/envoy/codec.hpp"
#include "protocol/envoy/describe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace envoy = rivetkit::protocol::envoy;
  const std::string_view input = rivetkit::fuzz::as_text(data, size);
  if (auto msg = envoy::decode_to_envoy(input)) {
    auto again = envoy::decode_to_envoy(envoy::encode(*msg));
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again == *msg);
    (void)envoy::describe(*msg);
    auto versioned = envoy::decode_versioned_to_envoy(envoy::encode_versioned(*msg));
    FUZZ_CHECK(versioned.has_value());
    FUZZ_CHECK(*versioned == *msg);
  }
  if (auto msg = envoy::decode_to_rivet(input)) {
    auto again = envoy::decode_to_rivet(envoy::encode(*msg));
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again == *msg);
    (void)envoy::describe(*msg);
  }
  if (auto msg = envoy::decode_versioned_to_envoy(input)) {
    auto again = envoy::decode_versioned_to_envoy(envoy::encode_versioned(*msg));
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again == *msg);
  }
  return 0;
}
