// Value -> JSON text with JSON.stringify's output rules (no whitespace, JS number formatting,
// the same string escapes), so that what we write matches what a JS server would write.

#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"
#include "protocol/text/js_number.hpp"
#include "protocol/text/utf8.hpp"

#include <cmath>

namespace rivetkit::protocol {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// JSON.stringify escapes '"', '\\' and C0 controls (short forms where they exist, else \u00xx in
// lower case) and leaves everything else, including '/', U+2028 and non-ASCII, as is. Invalid
// UTF-8 (which no decoder here produces) is replaced by U+FFFD so the output is always valid
// text for a WebSocket text frame.
void append_quoted(std::string_view s, std::string& out) {
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b >= 0x80u) {
      const std::size_t len = text::utf8_sequence_length(s.substr(i));
      if (len == 0) {
        out += "\xEF\xBF\xBD";
        ++i;
      } else {
        out.append(s, i, len);
        i += len;
      }
      continue;
    }
    switch (b) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (b < 0x20u) {
          out += "\\u00";
          out += kHexDigits[b >> 4];
          out += kHexDigits[b & 0xFu];
        } else {
          out += static_cast<char>(b);
        }
    }
    ++i;
  }
  out += '"';
}

void append_value(const Value& v, std::string& out) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNull:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::kInt:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::kBigInt:
      out += v.as_bigint().decimal();
      return;
    case Value::Kind::kDouble: {
      const double d = v.as_double();
      if (!std::isfinite(d)) {
        out += "null";
      } else {
        text::append_js_number(d, out);
      }
      return;
    }
    case Value::Kind::kString:
      append_quoted(v.as_string(), out);
      return;
    case Value::Kind::kBytes:
      out += "[\"$Uint8Array\",\"";
      out += base64_encode(v.as_bytes());
      out += "\"]";
      return;
    case Value::Kind::kArray: {
      out += '[';
      bool first = true;
      for (const auto& item : v.as_array()) {
        if (!first) {
          out += ',';
        }
        first = false;
        append_value(item, out);  // undefined in an array becomes null
      }
      out += ']';
      return;
    }
    case Value::Kind::kObject: {
      out += '{';
      bool first = true;
      for (const auto& m : v.as_object()) {
        if (m.value.is_undefined()) {
          continue;  // JSON.stringify drops undefined members
        }
        if (!first) {
          out += ',';
        }
        first = false;
        append_quoted(m.key, out);
        out += ':';
        append_value(m.value, out);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

void json_stringify_to(const Value& v, std::string& out) {
  append_value(v, out);
}

std::string json_stringify(const Value& v) {
  std::string out;
  append_value(v, out);
  return out;
}

}  // namespace rivetkit::protocol
