// Base64 (RFC 4648 §4, with padding) and base64url (§5, without padding), declared in compat.hpp.

#include "protocol/compat.hpp"

#include <array>
#include <cstdint>

namespace rivetkit::protocol {

namespace {

constexpr std::string_view kStandardAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

constexpr std::uint8_t kInvalid = 0xFF;

constexpr std::array<std::uint8_t, 256> make_reverse(std::string_view alphabet) {
  std::array<std::uint8_t, 256> table{};
  for (auto& entry : table) {
    entry = kInvalid;
  }
  for (std::size_t i = 0; i < alphabet.size(); ++i) {
    table[static_cast<std::uint8_t>(alphabet[i])] = static_cast<std::uint8_t>(i);
  }
  return table;
}

constexpr auto kStandardReverse = make_reverse(kStandardAlphabet);
constexpr auto kUrlReverse = make_reverse(kUrlAlphabet);

std::string encode(std::span<const std::uint8_t> data, std::string_view alphabet, bool pad) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    const std::uint32_t chunk = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8)
                                | std::uint32_t{data[i + 2]};
    out += alphabet[(chunk >> 18) & 63u];
    out += alphabet[(chunk >> 12) & 63u];
    out += alphabet[(chunk >> 6) & 63u];
    out += alphabet[chunk & 63u];
  }
  const std::size_t rest = data.size() - i;
  if (rest == 1) {
    const std::uint32_t chunk = std::uint32_t{data[i]} << 16;
    out += alphabet[(chunk >> 18) & 63u];
    out += alphabet[(chunk >> 12) & 63u];
    if (pad) {
      out += "==";
    }
  } else if (rest == 2) {
    const std::uint32_t chunk = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8);
    out += alphabet[(chunk >> 18) & 63u];
    out += alphabet[(chunk >> 12) & 63u];
    out += alphabet[(chunk >> 6) & 63u];
    if (pad) {
      out += '=';
    }
  }
  return out;
}

// Accepts input with or without padding. Padding, when present, must be complete and final.
// Unused low bits of the last symbol are ignored, as Node's Buffer does.
std::optional<Bytes> decode(std::string_view text, const std::array<std::uint8_t, 256>& reverse) {
  std::size_t padding = 0;
  while (!text.empty() && text.back() == '=' && padding < 2) {
    text.remove_suffix(1);
    ++padding;
  }
  if (padding > 0 && (text.size() + padding) % 4 != 0) {
    return std::nullopt;
  }
  if (text.size() % 4 == 1) {
    return std::nullopt;  // one leftover symbol carries only 6 bits: not a whole byte
  }
  Bytes out;
  out.reserve(text.size() / 4 * 3 + 2);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const std::uint8_t v = reverse[static_cast<std::uint8_t>(c)];
    if (v == kInvalid) {
      return std::nullopt;
    }
    acc = ((acc << 6) | v) & 0xFFFFFFu;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xFFu));
    }
  }
  return out;
}

}  // namespace

std::string base64_encode(std::span<const std::uint8_t> data) {
  return encode(data, kStandardAlphabet, true);
}

std::optional<Bytes> base64_decode(std::string_view text) {
  return decode(text, kStandardReverse);
}

std::string base64url_encode(std::span<const std::uint8_t> data) {
  return encode(data, kUrlAlphabet, false);
}

std::optional<Bytes> base64url_decode(std::string_view text) {
  return decode(text, kUrlReverse);
}

}  // namespace rivetkit::protocol
