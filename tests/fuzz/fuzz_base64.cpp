// Base64 (protocol/base64.cpp): compat ["$Uint8Array","..."] tags, the REST `input` and the
// gateway's rvt-input (base64url).
// Invariants: decode(encode(b)) == b for any bytes in both alphabets, and a decoded text
// re-encodes to something that decodes to the same bytes.
#include "fuzz_support.hpp"
#include "protocol/compat.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace protocol = rivetkit::protocol;
  const std::span<const std::uint8_t> bytes(data, size);
  const std::string_view text = rivetkit::fuzz::as_text(data, size);

  auto std_round = protocol::base64_decode(protocol::base64_encode(bytes));
  FUZZ_CHECK(std_round
             && std::equal(std_round->begin(), std_round->end(), bytes.begin(), bytes.end()));
  auto url_round = protocol::base64url_decode(protocol::base64url_encode(bytes));
  FUZZ_CHECK(url_round
             && std::equal(url_round->begin(), url_round->end(), bytes.begin(), bytes.end()));

  if (auto decoded = protocol::base64_decode(text)) {
    auto again = protocol::base64_decode(protocol::base64_encode(*decoded));
    FUZZ_CHECK(again && *again == *decoded);
    FUZZ_CHECK(decoded->size() <= text.size());
  }
  if (auto decoded = protocol::base64url_decode(text)) {
    auto again = protocol::base64url_decode(protocol::base64url_encode(*decoded));
    FUZZ_CHECK(again && *again == *decoded);
    FUZZ_CHECK(decoded->size() <= text.size());
  }
  return 0;
}
