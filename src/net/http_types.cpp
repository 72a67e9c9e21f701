#include "net/http_types.hpp"

#include <algorithm>
#include <cctype>

namespace rivetkit::net {

namespace {

char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::string_view> find_header(const Headers& headers, std::string_view name) {
  for (const auto& h : headers) {
    if (iequals(h.name, name)) {
      return std::string_view(h.value);
    }
  }
  return std::nullopt;
}

void HttpResponse::set_header(std::string name, std::string value) {
  std::transform(name.begin(), name.end(), name.begin(), ascii_lower);
  auto it = std::find_if(headers.begin(), headers.end(),
                         [&](const Header& h) { return iequals(h.name, name); });
  if (it == headers.end()) {
    headers.push_back(Header{std::move(name), std::move(value)});
    return;
  }
  it->value = std::move(value);
  // Drop later duplicates so the header has exactly one value.
  auto next = std::next(it);
  headers.erase(
      std::remove_if(next, headers.end(), [&](const Header& h) { return iequals(h.name, name); }),
      headers.end());
}

std::string_view trim_ows(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
    value.remove_prefix(1);
  }
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
    value.remove_suffix(1);
  }
  return value;
}

}  // namespace rivetkit::net
