#include "core/inspector/inspector_token.hpp"

#include "net/http_types.hpp"
#include "protocol/compat.hpp"

#include <array>
#include <cstdint>
#include <random>

namespace rivetkit::core::inspector {

namespace {

constexpr std::string_view kSubprotocolPrefix = "rivet_inspector_token.";

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) {
      return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    };
    if (lower(a[i]) != lower(b[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string token_key() {
  return std::string(1, '\x03');
}

std::string generate_token() {
  // std::random_device reads the kernel's random source (getrandom) with libstdc++ on Linux.
  std::random_device rd;
  std::array<std::uint8_t, 32> bytes{};
  for (std::size_t i = 0; i < bytes.size(); i += 4) {
    const std::uint32_t word = rd();
    for (std::size_t j = 0; j < 4; ++j) {
      bytes[i + j] = static_cast<std::uint8_t>(word >> (8 * j));
    }
  }
  return protocol::base64url_encode(bytes);
}

bool token_matches(std::string_view presented, std::string_view expected) {
  if (presented.size() != expected.size()) {
    return false;
  }
  unsigned char diff = 0;
  for (std::size_t i = 0; i < presented.size(); ++i) {
    diff = static_cast<unsigned char>(
        diff
        | (static_cast<unsigned char>(presented[i]) ^ static_cast<unsigned char>(expected[i])));
  }
  return diff == 0;
}

std::optional<std::string> bearer_token(std::string_view authorization) {
  authorization = net::trim_ows(authorization);
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()
      || !iequals(authorization.substr(0, kScheme.size()), kScheme)
      || (authorization[kScheme.size()] != ' ' && authorization[kScheme.size()] != '\t')) {
    return std::nullopt;
  }
  auto token = net::trim_ows(authorization.substr(kScheme.size()));
  if (token.empty()) {
    return std::nullopt;
  }
  return std::string(token);
}

std::optional<std::string> subprotocol_token(std::string_view protocols) {
  while (!protocols.empty()) {
    const auto comma = protocols.find(',');
    auto item = net::trim_ows(protocols.substr(0, comma));
    if (item.size() > kSubprotocolPrefix.size()
        && item.substr(0, kSubprotocolPrefix.size()) == kSubprotocolPrefix) {
      return std::string(item.substr(kSubprotocolPrefix.size()));
    }
    if (comma == std::string_view::npos) {
      break;
    }
    protocols.remove_prefix(comma + 1);
  }
  return std::nullopt;
}

}  // namespace rivetkit::core::inspector
