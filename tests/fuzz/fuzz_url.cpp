// URL helpers (util/url.cpp): target splitting, percent-decoding (plain and form style) and
// query splitting, all applied to raw request targets.
// Invariants: percent_decode(percent_encode(s)) == s for any bytes; the split pieces are views
// into the input that reassemble it; a pair's raw text is name[=value].
#include "fuzz_support.hpp"
#include "util/url.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace util = rivetkit::util;
  const std::string_view input = rivetkit::fuzz::as_text(data, size);

  for (bool plus : {false, true}) {
    auto round = util::percent_decode(util::percent_encode(input), plus);
    FUZZ_CHECK(round.has_value() && *round == input);
    if (auto decoded = util::percent_decode(input, plus)) {
      FUZZ_CHECK(decoded->size() <= input.size());
      auto again = util::percent_decode(util::percent_encode(*decoded), plus);
      FUZZ_CHECK(again.has_value() && *again == *decoded);
    }
  }

  const auto target = util::split_target(input);
  if (target.has_query) {
    FUZZ_CHECK(target.path.size() + 1 + target.query.size() == input.size());
    FUZZ_CHECK(input[target.path.size()] == '?');
  } else {
    FUZZ_CHECK(target.path == input && target.query.empty());
  }
  FUZZ_CHECK(target.path.find('?') == std::string_view::npos);

  std::size_t covered = 0;
  for (const auto& pair : util::split_query(target.query)) {
    FUZZ_CHECK(!pair.raw.empty());
    FUZZ_CHECK(pair.raw.find('&') == std::string_view::npos);
    FUZZ_CHECK(pair.raw.data() >= target.query.data()
               && pair.raw.data() + pair.raw.size() <= target.query.data() + target.query.size());
    FUZZ_CHECK(pair.raw.substr(0, pair.raw_name.size()) == pair.raw_name);
    if (pair.raw_name.size() < pair.raw.size()) {
      FUZZ_CHECK(pair.raw[pair.raw_name.size()] == '=');
      FUZZ_CHECK(pair.raw.substr(pair.raw_name.size() + 1) == pair.raw_value);
    } else {
      FUZZ_CHECK(pair.raw_value.empty());
    }
    covered += pair.raw.size();
  }
  FUZZ_CHECK(covered <= target.query.size());
  return 0;
}
