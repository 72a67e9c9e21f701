#include "core/keys.hpp"

namespace rivetkit::core {

std::string serialize_key(const std::vector<std::string>& key) {
  if (key.empty()) {
    return "/";
  }
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (i > 0) {
      out += '/';
    }
    const std::string& part = key[i];
    if (part.empty()) {
      out += "\\0";
      continue;
    }
    for (char ch : part) {
      if (ch == '\\' || ch == '/') {
        out += '\\';
      }
      out += ch;
    }
  }
  return out;
}

std::optional<std::vector<std::string>> parse_key(std::string_view serialized) {
  if (serialized == "/") {
    return std::vector<std::string>{};
  }
  std::vector<std::string> parts;
  std::string current;
  bool raw_empty_marker = false;  // the part was exactly "\0"
  std::size_t part_len = 0;       // characters consumed for the current part
  for (std::size_t i = 0; i < serialized.size(); ++i) {
    char ch = serialized[i];
    if (ch == '\\') {
      if (i + 1 >= serialized.size()) {
        return std::nullopt;
      }
      char next = serialized[++i];
      if (next == '0' && part_len == 0
          && (i + 1 == serialized.size() || serialized[i + 1] == '/')) {
        raw_empty_marker = true;
      } else {
        current += next;
      }
      part_len += 2;
    } else if (ch == '/') {
      parts.push_back(raw_empty_marker ? std::string() : std::move(current));
      current.clear();
      raw_empty_marker = false;
      part_len = 0;
    } else {
      current += ch;
      ++part_len;
    }
  }
  parts.push_back(raw_empty_marker ? std::string() : std::move(current));
  return parts;
}

}  // namespace rivetkit::core
