// JSON text -> Value (RFC 8259), with JavaScript's number semantics and bounded nesting.
// A hand-written recursive descent parser: it never throws, reports the byte offset of the first
// problem, and rejects what JSON.parse / serde_json reject (trailing commas, comments, lone
// surrogate escapes, raw control characters, invalid UTF-8, trailing data).

#include "protocol/decode_error.hpp"
#include "protocol/json/json.hpp"
#include "protocol/object_builder.hpp"
#include "protocol/text/utf8.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>

namespace rivetkit::protocol {

namespace {

class JsonParser {
 public:
  JsonParser(std::string_view text, const DecodeLimits& limits) : text_(text), limits_(limits) {}

  Result<Value> parse_document() {
    Value v;
    skip_whitespace();
    if (!parse_value(v, 0)) {
      return fail_decode(error_);
    }
    skip_whitespace();
    if (pos_ != text_.size()) {
      return fail_decode(at("unexpected data after the JSON value"));
    }
    return v;
  }

 private:
  bool parse_value(Value& out, std::size_t depth) {
    if (pos_ >= text_.size()) {
      return error("unexpected end of JSON input");
    }
    switch (text_[pos_]) {
      case '{':
        return parse_object(out, depth + 1);
      case '[':
        return parse_array(out, depth + 1);
      case '"': {
        std::string s;
        if (!parse_string(s)) {
          return false;
        }
        out = Value(std::move(s));
        return true;
      }
      case 't':
        return parse_literal("true", Value(true), out);
      case 'f':
        return parse_literal("false", Value(false), out);
      case 'n':
        return parse_literal("null", Value(nullptr), out);
      default:
        return parse_number(out);
    }
  }

  bool parse_literal(std::string_view word, Value v, Value& out) {
    if (text_.substr(pos_, word.size()) != word) {
      return error(at("invalid literal"));
    }
    pos_ += word.size();
    out = std::move(v);
    return true;
  }

  bool parse_object(Value& out, std::size_t depth) {
    if (depth > limits_.max_depth) {
      return error(at("nesting deeper than the limit"));
    }
    ++pos_;  // '{'
    ObjectBuilder obj;
    skip_whitespace();
    if (peek('}')) {
      ++pos_;
      out = Value(Object{});
      return true;
    }
    while (true) {
      skip_whitespace();
      if (!peek('"')) {
        return error(at("expected a string key"));
      }
      std::string key;
      if (!parse_string(key)) {
        return false;
      }
      skip_whitespace();
      if (!peek(':')) {
        return error(at("expected ':' after an object key"));
      }
      ++pos_;
      skip_whitespace();
      Value v;
      if (!parse_value(v, depth)) {
        return false;
      }
      obj.set(std::move(key), std::move(v));
      if (obj.size() > limits_.max_items) {
        return error(at("object has more members than the limit"));
      }
      skip_whitespace();
      if (peek(',')) {
        ++pos_;
        continue;
      }
      if (peek('}')) {
        ++pos_;
        out = Value(obj.take());
        return true;
      }
      return error(at("expected ',' or '}' in an object"));
    }
  }

  bool parse_array(Value& out, std::size_t depth) {
    if (depth > limits_.max_depth) {
      return error(at("nesting deeper than the limit"));
    }
    ++pos_;  // '['
    Array items;
    skip_whitespace();
    if (peek(']')) {
      ++pos_;
      out = Value(std::move(items));
      return true;
    }
    while (true) {
      skip_whitespace();
      Value v;
      if (!parse_value(v, depth)) {
        return false;
      }
      items.push_back(std::move(v));
      if (items.size() > limits_.max_items) {
        return error(at("array has more items than the limit"));
      }
      skip_whitespace();
      if (peek(',')) {
        ++pos_;
        continue;
      }
      if (peek(']')) {
        ++pos_;
        out = Value(std::move(items));
        return true;
      }
      return error(at("expected ',' or ']' in an array"));
    }
  }

  bool parse_hex4(std::uint32_t& out) {
    if (text_.size() - pos_ < 4) {
      return error(at("truncated \\u escape"));
    }
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      std::uint32_t digit = 0;
      if (c >= '0' && c <= '9') {
        digit = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return error(at("invalid hex digit in \\u escape"));
      }
      out = (out << 4) | digit;
    }
    return true;
  }

  bool parse_escape(std::string& out) {
    if (pos_ >= text_.size()) {
      return error("unexpected end of JSON input in an escape");
    }
    const char c = text_[pos_++];
    switch (c) {
      case '"':
        out += '"';
        return true;
      case '\\':
        out += '\\';
        return true;
      case '/':
        out += '/';
        return true;
      case 'b':
        out += '\b';
        return true;
      case 'f':
        out += '\f';
        return true;
      case 'n':
        out += '\n';
        return true;
      case 'r':
        out += '\r';
        return true;
      case 't':
        out += '\t';
        return true;
      case 'u':
        break;
      default:
        return error(at("invalid escape"));
    }
    std::uint32_t cp = 0;
    if (!parse_hex4(cp)) {
      return false;
    }
    // Strings must stay valid UTF-8, so a surrogate escape is only accepted as a proper pair
    // (serde_json, which rivetkit-core uses, rejects lone surrogates as well).
    if (cp >= 0xDC00u && cp <= 0xDFFFu) {
      return error(at("lone low surrogate in \\u escape"));
    }
    if (cp >= 0xD800u && cp <= 0xDBFFu) {
      if (text_.substr(pos_, 2) != "\\u") {
        return error(at("lone high surrogate in \\u escape"));
      }
      pos_ += 2;
      std::uint32_t low = 0;
      if (!parse_hex4(low)) {
        return false;
      }
      if (low < 0xDC00u || low > 0xDFFFu) {
        return error(at("high surrogate not followed by a low surrogate"));
      }
      cp = 0x10000u + ((cp - 0xD800u) << 10) + (low - 0xDC00u);
    }
    text::append_utf8(cp, out);
    return true;
  }

  bool parse_string(std::string& out) {
    ++pos_;  // opening quote
    while (true) {
      // Copy the run of plain bytes up to the next quote, backslash or control character.
      const std::size_t start = pos_;
      while (pos_ < text_.size()) {
        const auto b = static_cast<unsigned char>(text_[pos_]);
        if (b == '"' || b == '\\' || b < 0x20u) {
          break;
        }
        ++pos_;
      }
      const std::string_view run = text_.substr(start, pos_ - start);
      if (!text::is_valid_utf8(run)) {
        return error("invalid UTF-8 in a JSON string near offset " + std::to_string(start));
      }
      out.append(run);
      if (pos_ >= text_.size()) {
        return error("unterminated JSON string");
      }
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        ++pos_;
        if (!parse_escape(out)) {
          return false;
        }
        continue;
      }
      return error(at("control character in a JSON string"));
    }
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  bool parse_number(Value& out) {
    const std::size_t start = pos_;
    bool negative = false;
    bool is_integer = true;
    if (peek('-')) {
      negative = true;
      ++pos_;
    }
    if (pos_ >= text_.size() || !is_digit(text_[pos_])) {
      pos_ = start;
      return error(at("unexpected character"));
    }
    if (text_[pos_] == '0') {
      ++pos_;
      if (pos_ < text_.size() && is_digit(text_[pos_])) {
        return error(at("leading zero in a number"));
      }
    } else {
      while (pos_ < text_.size() && is_digit(text_[pos_])) {
        ++pos_;
      }
    }
    if (peek('.')) {
      is_integer = false;
      ++pos_;
      if (pos_ >= text_.size() || !is_digit(text_[pos_])) {
        return error(at("expected a digit after the decimal point"));
      }
      while (pos_ < text_.size() && is_digit(text_[pos_])) {
        ++pos_;
      }
    }
    if (peek('e') || peek('E')) {
      is_integer = false;
      ++pos_;
      if (peek('+') || peek('-')) {
        ++pos_;
      }
      if (pos_ >= text_.size() || !is_digit(text_[pos_])) {
        return error(at("expected a digit in the exponent"));
      }
      while (pos_ < text_.size() && is_digit(text_[pos_])) {
        ++pos_;
      }
    }
    const std::string_view literal = text_.substr(start, pos_ - start);
    const char* first = literal.data();
    const char* last = literal.data() + literal.size();

    // "-0" is the JS number -0, not the integer 0.
    if (is_integer && !(negative && literal == "-0")) {
      std::int64_t i = 0;
      const auto res = std::from_chars(first, last, i);
      if (res.ec == std::errc() && res.ptr == last) {
        out = Value(i);
        return true;
      }
    }
    double d = 0;
    const auto res = std::from_chars(first, last, d);
    if (res.ec == std::errc::result_out_of_range) {
      // JSON.parse gives ±Infinity for overflow and ±0 for underflow.
      d = overflows(literal) ? std::numeric_limits<double>::infinity() : 0.0;
      if (negative) {
        d = -d;
      }
    } else if (res.ec != std::errc() || res.ptr != last) {
      return error("invalid number at offset " + std::to_string(start));
    }
    out = Value(d);
    return true;
  }

  // For an out-of-range literal: true when its magnitude is huge rather than tiny. The decimal
  // exponent of the leading significant digit decides it.
  static bool overflows(std::string_view literal) {
    if (!literal.empty() && literal[0] == '-') {
      literal.remove_prefix(1);
    }
    const std::size_t e_pos = literal.find_first_of("eE");
    const std::string_view mantissa = literal.substr(0, e_pos);
    long long exponent = 0;
    if (e_pos != std::string_view::npos) {
      std::string_view exp_text = literal.substr(e_pos + 1);
      if (!exp_text.empty() && exp_text[0] == '+') {
        exp_text.remove_prefix(1);
      }
      const auto res =
          std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
      if (res.ec == std::errc::result_out_of_range) {
        return exp_text[0] != '-';
      }
    }
    const std::size_t dot = mantissa.find('.');
    const std::string_view int_part = mantissa.substr(0, dot);
    const std::size_t first_nonzero = int_part.find_first_not_of('0');
    if (first_nonzero != std::string_view::npos) {
      const auto int_digits = static_cast<long long>(int_part.size() - first_nonzero);
      return int_digits - 1 + exponent > 0;
    }
    const std::string_view frac =
        dot == std::string_view::npos ? std::string_view{} : mantissa.substr(dot + 1);
    const std::size_t frac_nonzero = frac.find_first_not_of('0');
    if (frac_nonzero == std::string_view::npos) {
      return false;  // zero never overflows
    }
    return -static_cast<long long>(frac_nonzero) - 1 + exponent > 0;
  }

  void skip_whitespace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        return;
      }
      ++pos_;
    }
  }

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  std::string at(std::string_view what) const {
    if (pos_ >= text_.size()) {
      return std::string(what) + " at end of input";
    }
    return std::string(what) + " at offset " + std::to_string(pos_);
  }

  bool error(std::string message) {
    error_ = "invalid JSON: " + std::move(message);
    return false;
  }

  std::string_view text_;
  const DecodeLimits& limits_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace

Result<Value> json_parse(std::string_view text, const DecodeLimits& limits) {
  return JsonParser(text, limits).parse_document();
}

}  // namespace rivetkit::protocol
