#include "protocol/text/js_number.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <system_error>

namespace rivetkit::protocol::text {

void append_js_number(double d, std::string& out) {
  if (std::isnan(d)) {
    out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-Infinity" : "Infinity";
    return;
  }
  if (d == 0) {
    out += '0';  // JS prints -0 as "0"
    return;
  }
  if (d < 0) {
    out += '-';
    d = -d;
  }

  // std::to_chars in scientific form gives the shortest round-trip digits ("1.2345e-07"); JS uses
  // the same digits and only lays them out differently.
  std::array<char, 64> buf{};
  const auto res =
      std::to_chars(buf.data(), buf.data() + buf.size(), d, std::chars_format::scientific);
  if (res.ec != std::errc()) {
    out += "NaN";  // cannot happen for a finite double and a 64-byte buffer
    return;
  }
  const std::string_view sci(buf.data(), static_cast<std::size_t>(res.ptr - buf.data()));
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') {
      digits += c;
    }
  }
  int exponent = 0;
  std::string_view exp_text = sci.substr(e_pos + 1);
  if (!exp_text.empty() && exp_text[0] == '+') {
    exp_text.remove_prefix(1);
  }
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);

  // ECMA-262 naming: k digits, value = digits * 10^(n-k).
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, 0, static_cast<std::size_t>(n));
    out += '.';
    out.append(digits, static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += 'e';
    out += (n - 1) < 0 ? '-' : '+';
    out += std::to_string(std::abs(n - 1));
  }
}

}  // namespace rivetkit::protocol::text
