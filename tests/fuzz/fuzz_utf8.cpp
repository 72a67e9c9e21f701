// UTF-8 validation (protocol/text/utf8.cpp): the gate every text string passes before it becomes
// a Value (JSON strings, CBOR text, BARE str).
// Invariants: is_valid_utf8 and utf8_sequence_length agree with a straightforward RFC 3629
// decoder written here (decode the code point, then reject overlong forms, surrogates and
// values above U+10FFFF), and append_utf8 writes valid sequences of the expected length.
#include "fuzz_support.hpp"
#include "protocol/text/utf8.hpp"

#include <string>

namespace {

// Length of the valid sequence at s[0], or 0.
std::size_t reference_length(std::string_view s) {
  if (s.empty()) {
    return 0;
  }
  const auto b0 = static_cast<std::uint8_t>(s[0]);
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if (b0 < 0x80) {
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1Fu;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0Fu;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07u;
  } else {
    return 0;
  }
  if (s.size() < len) {
    return 0;
  }
  for (std::size_t i = 1; i < len; ++i) {
    const auto b = static_cast<std::uint8_t>(s[i]);
    if ((b & 0xC0) != 0x80) {
      return 0;
    }
    cp = (cp << 6) | (b & 0x3Fu);
  }
  constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
    return 0;
  }
  return len;
}

bool reference_valid(std::string_view s) {
  while (!s.empty()) {
    const std::size_t len = reference_length(s);
    if (len == 0) {
      return false;
    }
    s.remove_prefix(len);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace text = rivetkit::protocol::text;
  const std::string_view input = rivetkit::fuzz::as_text(data, size);
  FUZZ_CHECK(text::is_valid_utf8(input) == reference_valid(input));
  for (std::size_t i = 0; i < input.size(); ++i) {
    FUZZ_CHECK(text::utf8_sequence_length(input.substr(i)) == reference_length(input.substr(i)));
  }

  if (size >= 4) {
    std::uint32_t cp = (std::uint32_t{data[0]} | std::uint32_t{data[1]} << 8
                        | std::uint32_t{data[2]} << 16 | std::uint32_t{data[3]} << 24)
                       % 0x110000u;
    if (cp < 0xD800 || cp > 0xDFFF) {
      std::string out;
      text::append_utf8(cp, out);
      const std::size_t expected = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      FUZZ_CHECK(out.size() == expected);
      FUZZ_CHECK(reference_length(out) == expected);
      FUZZ_CHECK(text::is_valid_utf8(out));
    }
  }
  return 0;
}
