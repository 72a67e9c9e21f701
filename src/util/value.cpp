#include <rivetkit/value.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>

namespace rivetkit {

namespace {

// Decimal digits (most significant first, no sign) <-> big-endian bytes, by schoolbook
// division/multiplication. Values here are small (ids, counters); this is not a hot path.
std::vector<std::uint8_t> decimal_to_magnitude(std::string_view digits) {
  std::vector<std::uint8_t> bytes;  // big-endian
  for (char ch : digits) {
    unsigned carry = static_cast<unsigned>(ch - '0');
    for (auto it = bytes.rbegin(); it != bytes.rend(); ++it) {
      unsigned v = static_cast<unsigned>(*it) * 10u + carry;
      *it = static_cast<std::uint8_t>(v & 0xffu);
      carry = v >> 8;
    }
    while (carry != 0) {
      bytes.insert(bytes.begin(), static_cast<std::uint8_t>(carry & 0xffu));
      carry >>= 8;
    }
  }
  auto first = std::find_if(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b != 0; });
  bytes.erase(bytes.begin(), first);
  return bytes;
}

std::string magnitude_to_decimal(std::vector<std::uint8_t> bytes) {
  std::string digits;
  auto nonzero = [&] {
    return std::any_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b != 0; });
  };
  while (nonzero()) {
    unsigned rem = 0;
    for (auto& b : bytes) {
      unsigned cur = (rem << 8) | b;
      b = static_cast<std::uint8_t>(cur / 10u);
      rem = cur % 10u;
    }
    digits.push_back(static_cast<char>('0' + rem));
  }
  if (digits.empty()) {
    return "0";
  }
  std::reverse(digits.begin(), digits.end());
  return digits;
}

}  // namespace

BigInt BigInt::from_int64(std::int64_t v) {
  BigInt b;
  b.decimal_ = std::to_string(v);
  return b;
}

BigInt BigInt::from_uint64(std::uint64_t v) {
  BigInt b;
  b.decimal_ = std::to_string(v);
  return b;
}

std::optional<BigInt> BigInt::parse(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.size() > 4096) {
    return std::nullopt;
  }
  for (char ch : text) {
    if (ch < '0' || ch > '9') {
      return std::nullopt;
    }
  }
  while (text.size() > 1 && text[0] == '0') {
    text.remove_prefix(1);
  }
  BigInt b;
  b.decimal_.clear();
  if (negative && text != "0") {
    b.decimal_.push_back('-');
  }
  b.decimal_.append(text);
  return b;
}

BigInt BigInt::from_magnitude(const std::vector<std::uint8_t>& be, bool negative) {
  BigInt b;
  std::string digits = magnitude_to_decimal(be);
  b.decimal_.clear();
  if (negative && digits != "0") {
    b.decimal_.push_back('-');
  }
  b.decimal_.append(digits);
  return b;
}

std::optional<std::int64_t> BigInt::to_int64() const {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(decimal_.data(), decimal_.data() + decimal_.size(), v);
  if (ec != std::errc() || ptr != decimal_.data() + decimal_.size()) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::uint64_t> BigInt::to_uint64() const {
  if (negative()) {
    return std::nullopt;
  }
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(decimal_.data(), decimal_.data() + decimal_.size(), v);
  if (ec != std::errc() || ptr != decimal_.data() + decimal_.size()) {
    return std::nullopt;
  }
  return v;
}

std::vector<std::uint8_t> BigInt::magnitude() const {
  std::string_view digits = decimal_;
  if (negative()) {
    digits.remove_prefix(1);
  }
  return decimal_to_magnitude(digits);
}

Value::Storage Value::from_unsigned(std::uint64_t u) {
  if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return static_cast<std::int64_t>(u);
  }
  return BigInt::from_uint64(u);
}

Value Value::object(std::initializer_list<std::pair<std::string_view, Value>> members) {
  Value v{Object{}};
  for (const auto& [k, val] : members) {
    v.set(k, val);
  }
  return v;
}

Value Value::array(std::initializer_list<Value> items) {
  return Value{Array(items)};
}

std::string_view Value::kind_name() const {
  switch (kind()) {
    case Kind::kUndefined:
      return "undefined";
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kBigInt:
      return "bigint";
    case Kind::kDouble:
      return "double";
    case Kind::kString:
      return "string";
    case Kind::kBytes:
      return "bytes";
    case Kind::kArray:
      return "array";
    case Kind::kObject:
      return "object";
  }
  return "unknown";
}

const Value* Value::find(std::string_view key) const {
  if (!is_object()) {
    return nullptr;
  }
  for (const auto& m : std::get<Object>(v_)) {
    if (m.key == key) {
      return &m.value;
    }
  }
  return nullptr;
}

Value* Value::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value*>(this)->find(key));
}

Value& Value::operator[](std::string_view key) {
  if (is_null()) {
    v_ = Object{};
  }
  auto& obj = std::get<Object>(v_);
  for (auto& m : obj) {
    if (m.key == key) {
      return m.value;
    }
  }
  obj.push_back(Member{std::string(key), Value{}});
  return obj.back().value;
}

void Value::set(std::string_view key, Value v) {
  (*this)[key] = std::move(v);
}

bool Value::operator==(const Value& other) const {
  return v_ == other.v_;
}

namespace {

void debug_append(const Value& v, std::string& out) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      out += "undefined";
      break;
    case Value::Kind::kNull:
      out += "null";
      break;
    case Value::Kind::kBool:
      out += v.as_bool() ? "true" : "false";
      break;
    case Value::Kind::kInt:
      out += std::to_string(v.as_int());
      break;
    case Value::Kind::kBigInt:
      out += v.as_bigint().decimal();
      out += 'n';
      break;
    case Value::Kind::kDouble: {
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof(buf), v.as_double());
      out.append(buf, res.ptr);
      break;
    }
    case Value::Kind::kString:
      out += '"';
      out += v.as_string();
      out += '"';
      break;
    case Value::Kind::kBytes: {
      out += "bytes[";
      static constexpr char kHex[] = "0123456789abcdef";
      for (auto b : v.as_bytes()) {
        out += kHex[b >> 4];
        out += kHex[b & 15];
      }
      out += ']';
      break;
    }
    case Value::Kind::kArray: {
      out += '[';
      bool first = true;
      for (const auto& item : v.as_array()) {
        if (!first) {
          out += ',';
        }
        first = false;
        debug_append(item, out);
      }
      out += ']';
      break;
    }
    case Value::Kind::kObject: {
      out += '{';
      bool first = true;
      for (const auto& m : v.as_object()) {
        if (!first) {
          out += ',';
        }
        first = false;
        out += '"';
        out += m.key;
        out += "\":";
        debug_append(m.value, out);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace

std::string to_debug_string(const Value& v) {
  std::string out;
  debug_append(v, out);
  return out;
}

}  // namespace rivetkit

// ---- convert.hpp support --------------------------------------------------------------------

#include <rivetkit/convert.hpp>

namespace rivetkit::detail {

void throw_conversion(std::string_view expected, const Value& got) {
  throw ConversionError("expected " + std::string(expected) + ", got "
                        + std::string(got.kind_name()));
}

void require_object(const Value& v) {
  if (!v.is_object()) {
    throw_conversion("object", v);
  }
}

}  // namespace rivetkit::detail

// ---- detail/invoke.hpp support --------------------------------------------------------------

#include <rivetkit/detail/invoke.hpp>

namespace rivetkit::detail {

void throw_invalid_argument(const std::string& action,
                            std::size_t index,
                            const std::string& reason) {
  throw ActorError(
      Error{"actor", "invalid_request",
            "Invalid argument " + std::to_string(index) + " for action '" + action + "': " + reason,
            std::nullopt, true});
}

}  // namespace rivetkit::detail

namespace rivetkit::detail {

void throw_state_not_enabled() {
  throw ActorError(Error{"actor", "state_not_enabled",
                         "State not enabled: this actor declares no state type (give it one with "
                         "rivetkit::actor<State>(...) to use c.state())",
                         std::nullopt, false});
}

}  // namespace rivetkit::detail
