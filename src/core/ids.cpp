#include "core/ids.hpp"

#include <array>
#include <cstdint>
#include <random>

namespace rivetkit::core {

namespace {

std::mt19937_64& rng() {
  thread_local std::mt19937_64 gen{[] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }()};
  return gen;
}

std::string base36_id() {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::uniform_int_distribution<int> dist(0, 35);
  std::string out;
  out.reserve(30);
  for (int i = 0; i < 27; ++i) {
    out += kDigits[dist(rng())];
  }
  // The engine's ids end with the datacenter label; keep the same look for datacenter 1.
  out += "l00";
  return out;
}

}  // namespace

std::string new_uuid_v4() {
  std::array<std::uint8_t, 16> b{};
  std::uint64_t hi = rng()();
  std::uint64_t lo = rng()();
  for (int i = 0; i < 8; ++i) {
    b[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(hi >> (8 * i));
    b[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(lo >> (8 * i));
  }
  b[6] = static_cast<std::uint8_t>((b[6] & 0x0fu) | 0x40u);
  b[8] = static_cast<std::uint8_t>((b[8] & 0x3fu) | 0x80u);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      out += '-';
    }
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 15u];
  }
  return out;
}

std::string new_actor_id() { return base36_id(); }
std::string new_ray_id() { return base36_id(); }

}  // namespace rivetkit::core
