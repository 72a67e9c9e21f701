#include "protocol/text/utf8.hpp"

namespace rivetkit::protocol::text {

namespace {

std::uint8_t byte_at(std::string_view s, std::size_t i) {
  return static_cast<std::uint8_t>(s[i]);
}

bool is_continuation(std::uint8_t b) {
  return (b & 0xC0u) == 0x80u;
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view s) {
  if (s.empty()) {
    return 0;
  }
  const std::uint8_t b0 = byte_at(s, 0);
  if (b0 < 0x80u) {
    return 1;
  }
  // The second byte's allowed range depends on the lead byte; that is how overlong forms,
  // surrogates (ED A0..BF) and code points above U+10FFFF (F4 90..) are excluded.
  std::size_t len = 0;
  std::uint8_t lo = 0x80u;
  std::uint8_t hi = 0xBFu;
  if (b0 >= 0xC2u && b0 <= 0xDFu) {
    len = 2;
  } else if (b0 == 0xE0u) {
    len = 3;
    lo = 0xA0u;
  } else if ((b0 >= 0xE1u && b0 <= 0xECu) || b0 == 0xEEu || b0 == 0xEFu) {
    len = 3;
  } else if (b0 == 0xEDu) {
    len = 3;
    hi = 0x9Fu;
  } else if (b0 == 0xF0u) {
    len = 4;
    lo = 0x90u;
  } else if (b0 >= 0xF1u && b0 <= 0xF3u) {
    len = 4;
  } else if (b0 == 0xF4u) {
    len = 4;
    hi = 0x8Fu;
  } else {
    return 0;
  }
  if (s.size() < len) {
    return 0;
  }
  const std::uint8_t b1 = byte_at(s, 1);
  if (b1 < lo || b1 > hi) {
    return 0;
  }
  for (std::size_t i = 2; i < len; ++i) {
    if (!is_continuation(byte_at(s, i))) {
      return 0;
    }
  }
  return len;
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    // Fast path for ASCII runs.
    if (byte_at(s, i) < 0x80u) {
      ++i;
      continue;
    }
    const std::size_t len = utf8_sequence_length(s.substr(i));
    if (len == 0) {
      return false;
    }
    i += len;
  }
  return true;
}

void append_utf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80u) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800u) {
    out.push_back(static_cast<char>(0xC0u | (cp >> 6)));
    out.push_back(static_cast<char>(0x80u | (cp & 0x3Fu)));
  } else if (cp < 0x10000u) {
    out.push_back(static_cast<char>(0xE0u | (cp >> 12)));
    out.push_back(static_cast<char>(0x80u | ((cp >> 6) & 0x3Fu)));
    out.push_back(static_cast<char>(0x80u | (cp & 0x3Fu)));
  } else {
    out.push_back(static_cast<char>(0xF0u | (cp >> 18)));
    out.push_back(static_cast<char>(0x80u | ((cp >> 12) & 0x3Fu)));
    out.push_back(static_cast<char>(0x80u | ((cp >> 6) & 0x3Fu)));
    out.push_back(static_cast<char>(0x80u | (cp & 0x3Fu)));
  }
}

}  // namespace rivetkit::protocol::text
