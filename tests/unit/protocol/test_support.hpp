#pragma once
// Helpers shared by the protocol tests: hex <-> bytes and reading the captured vector files.

#include <rivetkit/value.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rivetkit {

/// gtest prints Values readably in failure messages.
inline void PrintTo(const Value& v, std::ostream* os) {
  *os << to_debug_string(v);
}

}  // namespace rivetkit

namespace rivetkit::protocol::test {

/// "0a ff|00" -> bytes. Spaces and '|' are ignored so vectors can be copied from the spec as-is.
inline std::string from_hex(std::string_view hex) {
  std::string out;
  int high = -1;
  for (char c : hex) {
    if (c == ' ' || c == '|' || c == '\n') {
      continue;
    }
    int v = 0;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      throw std::invalid_argument("bad hex digit");
    }
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<char>((high << 4) | v));
      high = -1;
    }
  }
  if (high >= 0) {
    throw std::invalid_argument("odd number of hex digits");
  }
  return out;
}

inline std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<std::uint8_t>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot open " + path);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string client_vector_path(std::string_view name) {
  return std::string(RIVETKIT_VECTORS_DIR) + "/client/" + std::string(name);
}

}  // namespace rivetkit::protocol::test
