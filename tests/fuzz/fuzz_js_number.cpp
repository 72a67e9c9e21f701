// JavaScript number text (protocol/text/js_number.cpp): how doubles become JSON numbers and JS
// property keys. The double is either the first 8 input bytes (any bit pattern) or, when the
// input is decimal text, what strtod makes of it (so the fuzzer can steer towards the notation
// boundaries 1e-7 and 1e21).
// Invariants: the text reads back as the same double; its digits are the shortest round-trip
// digits (std::to_chars); fixed notation exactly where ECMA-262 Number::toString uses it (1e-7
// and 1e21 are the first exponential values); and the JSON parser reads it as the same number.
#include "fuzz_support.hpp"
#include "protocol/json/json.hpp"
#include "protocol/text/js_number.hpp"

#include <charconv>
#include <cstring>
#include <string>

namespace {

struct Decimal {
  std::string digits;  // no leading or trailing zeros ("" for zero)
  int point = 0;       // value = 0.digits * 10^point
};

// Normalizes "[-]ddd[.ddd][e[+-]ddd]" text.
Decimal normalize(std::string_view text) {
  if (!text.empty() && text[0] == '-') {
    text.remove_prefix(1);
  }
  Decimal out;
  const auto e = text.find_first_of("eE");
  std::string_view mantissa = text.substr(0, e);
  int exponent = e == std::string_view::npos ? 0 : std::stoi(std::string(text.substr(e + 1)));
  int point = -1;
  for (std::size_t i = 0; i < mantissa.size(); ++i) {
    if (mantissa[i] == '.') {
      point = static_cast<int>(out.digits.size());
    } else {
      out.digits += mantissa[i];
    }
  }
  if (point < 0) {
    point = static_cast<int>(out.digits.size());
  }
  const auto first = out.digits.find_first_not_of('0');
  if (first == std::string::npos) {
    return {};
  }
  out.digits.erase(0, first);
  point -= static_cast<int>(first);
  out.digits.erase(out.digits.find_last_not_of('0') + 1);
  out.point = point + exponent;
  return out;
}

void check(double d) {
  std::string text;
  rivetkit::protocol::text::append_js_number(d, text);
  if (std::isnan(d)) {
    FUZZ_CHECK(text == "NaN");
    return;
  }
  if (std::isinf(d)) {
    FUZZ_CHECK(text == (d > 0 ? "Infinity" : "-Infinity"));
    return;
  }
  FUZZ_CHECK(std::strtod(text.c_str(), nullptr) == d);

  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  FUZZ_CHECK(res.ec == std::errc{});
  const Decimal shortest = normalize({buf, static_cast<std::size_t>(res.ptr - buf)});
  const Decimal ours = normalize(text);
  FUZZ_CHECK(ours.digits == shortest.digits);
  FUZZ_CHECK(ours.point == shortest.point);
  const bool fixed = d == 0 || (shortest.point > -6 && shortest.point <= 21);
  FUZZ_CHECK((text.find('e') == std::string::npos) == fixed);

  auto parsed = rivetkit::protocol::json_parse(text);
  FUZZ_CHECK(parsed.has_value() && parsed->is_number());
  if (parsed->is_double()) {
    FUZZ_CHECK(parsed->as_double() == d);
  } else if (parsed->is_int()) {
    FUZZ_CHECK(static_cast<double>(parsed->as_int()) == d);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size >= 8) {
    double d = 0;
    std::memcpy(&d, data, sizeof d);
    check(d);
  }
  if (size > 0 && size < 64) {
    std::string text(rivetkit::fuzz::as_text(data, size));
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end != text.c_str()) {
      check(d);
    }
  }
  return 0;
}
