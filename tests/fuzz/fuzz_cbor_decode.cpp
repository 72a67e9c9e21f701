// CBOR decoder (protocol/cbor): CBOR WebSocket frames, CBOR HTTP bodies, the compat-CBOR `data`
// fields of BARE messages and the gateway's rvt-input.
// Invariant: the encoding is a fixpoint after one decode (encode(decode(encode(v))) ==
// encode(v)). Values need not match: integral floats become ints, 1b-headed ints become bigints.
#include "fuzz_support.hpp"
#include "protocol/cbor/cbor.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rivetkit;
  auto decoded = protocol::cbor_decode(std::span<const std::uint8_t>(data, size));
  if (!decoded) {
    return 0;
  }
  const std::string bytes = protocol::cbor_encode(*decoded);
  auto redecoded = protocol::cbor_decode(bytes);
  FUZZ_CHECK(redecoded.has_value());
  FUZZ_CHECK(protocol::cbor_encode(*redecoded) == bytes);
  return 0;
}
