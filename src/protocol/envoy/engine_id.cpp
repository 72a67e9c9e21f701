#include "protocol/envoy/engine_id.hpp"

#include <array>
#include <cstdint>

namespace rivetkit::protocol::envoy {

namespace {

constexpr std::size_t kDigits = 30;
constexpr std::size_t kBytes = 19;
constexpr std::uint8_t kVersion = 1;

int digit_of(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 10;
  }
  return -1;
}

}  // namespace

bool is_engine_id(std::string_view id) {
  if (id.size() != kDigits) {
    return false;
  }
  // value = value * 36 + digit, from the most significant digit (the last) down, in 19 bytes
  // least significant first; a carry out of the top byte means the digits name a larger number.
  std::array<std::uint8_t, kBytes> bytes{};
  for (auto it = id.rbegin(); it != id.rend(); ++it) {
    const int digit = digit_of(*it);
    if (digit < 0) {
      return false;
    }
    std::uint32_t carry = static_cast<std::uint32_t>(digit);
    for (auto& byte : bytes) {
      const std::uint32_t v = static_cast<std::uint32_t>(byte) * 36 + carry;
      byte = static_cast<std::uint8_t>(v & 0xff);
      carry = v >> 8;
    }
    if (carry != 0) {
      return false;
    }
  }
  return bytes[0] == kVersion;
}

}  // namespace rivetkit::protocol::envoy
