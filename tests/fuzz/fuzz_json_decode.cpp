// JSON parser (protocol/json): every WebSocket text frame and JSON HTTP body goes through it.
// Invariant: stringify is a fixpoint after one parse. Value equality does not hold across the
// round trip (1.0 parses as a double, its text "1" as an int), the text does.
#include "fuzz_support.hpp"
#include "protocol/json/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rivetkit;
  auto parsed = protocol::json_parse(fuzz::as_text(data, size));
  if (!parsed) {
    return 0;
  }
  const std::string text = protocol::json_stringify(*parsed);
  auto reparsed = protocol::json_parse(text);
  FUZZ_CHECK(reparsed.has_value());
  FUZZ_CHECK(protocol::json_stringify(*reparsed) == text);
  return 0;
}
