// Actor keys (core/keys.cpp): the REST `key` string and the engine's stored key are parsed back
// into parts.
// Invariants: serialize_key(parse_key(s)) parses to the same parts (parse . serialize is the
// identity on parts), and any list of parts survives serialize then parse.
#include "core/keys.hpp"
#include "fuzz_support.hpp"

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace core = rivetkit::core;
  const std::string_view input = rivetkit::fuzz::as_text(data, size);

  if (auto parts = core::parse_key(input)) {
    auto again = core::parse_key(core::serialize_key(*parts));
    FUZZ_CHECK(again.has_value() && *again == *parts);
  }

  // The same bytes as a list of parts, split on NUL (a byte keys may contain, so some parts
  // carry the other special characters '/' and '\').
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= input.size() && !input.empty()) {
    auto nul = input.find('\0', start);
    if (nul == std::string_view::npos) {
      parts.emplace_back(input.substr(start));
      break;
    }
    parts.emplace_back(input.substr(start, nul - start));
    start = nul + 1;
  }
  auto back = core::parse_key(core::serialize_key(parts));
  FUZZ_CHECK(back.has_value() && *back == parts);
  return 0;
}
