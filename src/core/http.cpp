// Implementation of the public Request/Response helpers (include/rivetkit/http.hpp).
#include <rivetkit/http.hpp>

#include <algorithm>
#include <cctype>

namespace rivetkit {

namespace {
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x))
                  == std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

std::optional<std::string_view> Request::header(std::string_view name) const {
  for (const auto& h : headers) {
    if (iequals(h.name, name)) {
      return std::string_view(h.value);
    }
  }
  return std::nullopt;
}

Response& Response::set_header(std::string name, std::string value) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (auto& h : headers) {
    if (h.name == name) {
      h.value = std::move(value);
      return *this;
    }
  }
  headers.push_back(HttpHeader{std::move(name), std::move(value)});
  return *this;
}

Response Response::json(std::string json_text, unsigned status) {
  Response r(status, std::move(json_text));
  r.set_header("content-type", "application/json");
  return r;
}

Response Response::text(std::string text, unsigned status) {
  Response r(status, std::move(text));
  r.set_header("content-type", "text/plain; charset=utf-8");
  return r;
}

}  // namespace rivetkit
