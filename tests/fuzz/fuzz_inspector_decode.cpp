// The inspector WebSocket protocol (protocol/inspector): a client frame in every version (1-6)
// and in the legacy framing (version first). Invariants: no crash, UB or leak; a frame that
// decodes is one message, and every answer the server could send to it encodes in every version.
#include "fuzz_support.hpp"
#include "protocol/inspector/inspector_messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace wire = rivetkit::protocol::inspector;
  const std::string_view input = rivetkit::fuzz::as_text(data, size);
  for (std::uint16_t v = 0; v <= wire::kMaxVersion + 1; ++v) {
    auto decoded = wire::decode_to_server(input, v);
    if (decoded) {
      FUZZ_CHECK(v >= wire::kMinVersion && v <= wire::kMaxVersion);
      // An error answer carries the decoded text back: it encodes in every version.
      if (auto* action = std::get_if<wire::ActionRequest>(&*decoded)) {
        for (std::uint16_t out = wire::kMinVersion; out <= wire::kMaxVersion; ++out) {
          FUZZ_CHECK(!wire::encode_to_client(wire::ErrorMessage{action->name}, out).empty());
        }
      }
    }
  }
  (void)wire::decode_to_server_embedded(input);
  return 0;
}
