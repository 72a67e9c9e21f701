#include "util/url.hpp"

namespace rivetkit::util {

Target split_target(std::string_view target) {
  Target t;
  auto q = target.find('?');
  if (q == std::string_view::npos) {
    t.path = target;
  } else {
    t.path = target.substr(0, q);
    t.query = target.substr(q + 1);
    t.has_query = true;
  }
  return t;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}
}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) {
        return std::nullopt;
      }
      int hi = hex_value(text[i + 1]);
      int lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) {
        return std::nullopt;
      }
      out += static_cast<char>((hi << 4) | lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9')
                      || u == '-' || u == '_' || u == '.' || u == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15u];
    }
  }
  return out;
}

std::vector<QueryPair> split_query(std::string_view query) {
  std::vector<QueryPair> out;
  std::size_t start = 0;
  while (start <= query.size()) {
    auto amp = query.find('&', start);
    std::string_view part =
        query.substr(start, amp == std::string_view::npos ? std::string_view::npos : amp - start);
    if (!part.empty()) {
      QueryPair p;
      p.raw = part;
      auto eq = part.find('=');
      p.raw_name = part.substr(0, eq);
      p.raw_value = eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1);
      out.push_back(p);
    }
    if (amp == std::string_view::npos) {
      break;
    }
    start = amp + 1;
  }
  return out;
}

}  // namespace rivetkit::util
