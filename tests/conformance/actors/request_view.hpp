#pragma once
// What the suite's fixtures read off a Fetch-API Request (url, headers, searchParams), computed
// from a rivetkit::Request. Shared by the raw HTTP, raw WebSocket and request-access actors.

#include <rivetkit/rivetkit.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fixture {

/// The request's URL (Fetch's request.url).
inline std::string request_url(const rivetkit::Request& req) {
  return req.url();
}

/// The headers as `Headers.forEach` gives them: lower-case names in sorted order, repeated
/// headers joined with ", ".
inline rivetkit::Value headers_object(const rivetkit::Request& req) {
  std::vector<std::pair<std::string, std::string>> sorted;
  for (const auto& h : req.headers) {
    auto it = std::find_if(sorted.begin(), sorted.end(),
                           [&](const auto& entry) { return entry.first == h.name; });
    if (it == sorted.end()) {
      sorted.emplace_back(h.name, h.value);
    } else {
      it->second += ", " + h.value;
    }
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  rivetkit::Value out{rivetkit::Object{}};
  for (auto& [name, value] : sorted) {
    out.set(name, std::move(value));
  }
  return out;
}

/// application/x-www-form-urlencoded decoding ('+' is a space, %XX a byte).
inline std::string form_decode(std::string_view text) {
  auto hex = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') {
      return ch - '0';
    }
    if (ch >= 'a' && ch <= 'f') {
      return ch - 'a' + 10;
    }
    if (ch >= 'A' && ch <= 'F') {
      return ch - 'A' + 10;
    }
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '+') {
      out.push_back(' ');
    } else if (ch == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

/// `Object.fromEntries(url.searchParams)`: the last value of a repeated key wins.
inline rivetkit::Value search_params(std::string_view search) {
  if (!search.empty() && search.front() == '?') {
    search.remove_prefix(1);
  }
  rivetkit::Value out{rivetkit::Object{}};
  while (!search.empty()) {
    auto amp = search.find('&');
    std::string_view pair = search.substr(0, amp);
    search = amp == std::string_view::npos ? std::string_view{} : search.substr(amp + 1);
    if (pair.empty()) {
      continue;
    }
    auto eq = pair.find('=');
    std::string key = form_decode(pair.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : form_decode(pair.substr(eq + 1));
    out.set(key, std::move(value));
  }
  return out;
}

/// JSON text of a Value (JSON.stringify).
inline std::string json(const rivetkit::Value& v) {
  return rivetkit::to_json(v);
}

/// JSON.parse: nullopt when the text is not JSON.
inline std::optional<rivetkit::Value> parse(std::string_view text) {
  auto parsed = rivetkit::parse_json(text);
  if (!parsed) {
    return std::nullopt;
  }
  return std::move(*parsed);
}

/// `value.type` when value is an object with a string `type`, else empty.
inline std::string type_of(const rivetkit::Value& v) {
  const rivetkit::Value* t = v.find("type");
  return t != nullptr && t->is_string() ? t->as_string() : std::string();
}

}  // namespace fixture
