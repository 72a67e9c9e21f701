// Compat tag revival (protocol/compat.cpp) over documents from either decoder: the first byte
// picks JSON (even) or CBOR (odd), the rest is the document.
// Invariants: compat_decode(compat_encode(v, mode)) == v for a revived v in both modes, and a
// value sent through compat CBOR is stable after its first trip.
#include "fuzz_support.hpp"
#include "protocol/cbor/cbor.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rivetkit;
  using protocol::CompatMode;
  if (size == 0) {
    return 0;
  }
  const bool cbor = (data[0] & 1u) != 0;
  auto doc = cbor ? protocol::cbor_decode(std::span<const std::uint8_t>(data + 1, size - 1))
                  : protocol::json_parse(fuzz::as_text(data + 1, size - 1));
  if (!doc) {
    return 0;
  }
  auto revived = protocol::compat_decode(*doc);
  if (!revived) {
    return 0;
  }
  for (CompatMode mode : {CompatMode::kJson, CompatMode::kCbor}) {
    auto again = protocol::compat_decode(protocol::compat_encode(*revived, mode));
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(fuzz::same_value(*again, *revived));
  }
  // Through the wire (compat CBOR, as BARE `data` fields carry values). The first pass may change
  // kinds (an int beyond 2^53 is written with the 8-byte head, which reads back as a bigint,
  // as cbor-x does); from then on the value and its bytes are stable.
  auto through_wire = [](const Value& v) {
    auto decoded =
        protocol::cbor_decode(protocol::cbor_encode(protocol::compat_encode(v, CompatMode::kCbor)));
    FUZZ_CHECK(decoded.has_value());
    auto revived_again = protocol::compat_decode(*decoded);
    FUZZ_CHECK(revived_again.has_value());
    return std::move(*revived_again);
  };
  const Value once = through_wire(*revived);
  const Value twice = through_wire(once);
  FUZZ_CHECK(fuzz::same_value(once, twice));
  FUZZ_CHECK(protocol::cbor_encode(protocol::compat_encode(twice, CompatMode::kCbor))
             == protocol::cbor_encode(protocol::compat_encode(once, CompatMode::kCbor)));
  return 0;
}
