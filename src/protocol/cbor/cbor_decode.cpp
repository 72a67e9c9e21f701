// CBOR bytes -> Value, accepting everything cbor-x 1.6 writes (see cbor.hpp for the mapping).
// Every length a head announces is checked against the bytes that remain before anything is
// allocated, nesting is bounded by DecodeLimits, and nothing throws.

#include "protocol/cbor/cbor.hpp"
#include "protocol/decode_error.hpp"
#include "protocol/object_builder.hpp"
#include "protocol/text/js_number.hpp"
#include "protocol/text/utf8.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace rivetkit::protocol {

namespace {

constexpr std::uint8_t kMajorUnsigned = 0;
constexpr std::uint8_t kMajorNegative = 1;
constexpr std::uint8_t kMajorBytes = 2;
constexpr std::uint8_t kMajorText = 3;
constexpr std::uint8_t kMajorArray = 4;
constexpr std::uint8_t kMajorMap = 5;
constexpr std::uint8_t kMajorTag = 6;
constexpr std::uint8_t kMajorSimple = 7;

constexpr std::uint8_t kInfoIndefinite = 31;
constexpr std::uint8_t kBreak = 0xFF;

constexpr std::uint64_t kTagPositiveBignum = 2;
constexpr std::uint64_t kTagNegativeBignum = 3;
constexpr std::uint64_t kTagTypedArrayFirst = 64;
constexpr std::uint64_t kTagTypedArrayLast = 87;
constexpr std::uint64_t kTagSet = 258;
constexpr std::uint64_t kTagMap = 259;

// Bignums are converted to decimal with a quadratic algorithm; 1 KiB (about 2466 digits) is far
// beyond any real id or counter and keeps a hostile payload cheap.
constexpr std::size_t kMaxBignumBytes = 1024;

// Containers reserve at most this many slots up front; beyond that they grow as items arrive, so
// an announced length costs memory only once the bytes for it have been seen.
constexpr std::size_t kMaxReserve = 1024;

double decode_half(std::uint16_t half) {
  const int exponent = (half >> 10) & 0x1F;
  const int mantissa = half & 0x3FF;
  double value = 0;
  if (exponent == 0) {
    value = std::ldexp(mantissa, -24);
  } else if (exponent != 31) {
    value = std::ldexp(mantissa + 1024, exponent - 25);
  } else {
    value = mantissa == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  }
  return (half & 0x8000u) != 0 ? -value : value;
}

// Big-endian magnitude + 1 (for negative bignums, whose value is -1 - n).
Bytes increment_magnitude(Bytes mag) {
  for (auto it = mag.rbegin(); it != mag.rend(); ++it) {
    if (*it != 0xFF) {
      ++*it;
      return mag;
    }
    *it = 0;
  }
  mag.insert(mag.begin(), 1);
  return mag;
}

class CborReader {
 public:
  CborReader(std::span<const std::uint8_t> data, const DecodeLimits& limits)
      : data_(data), limits_(limits) {}

  Result<Value> decode_document() {
    Value v;
    if (!read_item(v, 0)) {
      return fail_decode(error_);
    }
    if (pos_ != data_.size()) {
      return fail_decode("invalid CBOR: " + std::to_string(data_.size() - pos_)
                         + " unexpected trailing bytes at offset " + std::to_string(pos_));
    }
    return v;
  }

 private:
  struct Head {
    std::uint8_t major = 0;
    std::uint8_t info = 0;
    std::uint64_t arg = 0;
    bool indefinite = false;
  };

  bool read_head(Head& head) {
    if (pos_ >= data_.size()) {
      return error("unexpected end of input");
    }
    const std::uint8_t ib = data_[pos_++];
    head.major = static_cast<std::uint8_t>(ib >> 5);
    head.info = static_cast<std::uint8_t>(ib & 0x1F);
    head.indefinite = false;
    if (head.info < 24) {
      head.arg = head.info;
      return true;
    }
    if (head.info == kInfoIndefinite) {
      head.indefinite = true;
      head.arg = 0;
      return true;
    }
    std::size_t size = 0;
    switch (head.info) {
      case 24:
        size = 1;
        break;
      case 25:
        size = 2;
        break;
      case 26:
        size = 4;
        break;
      case 27:
        size = 8;
        break;
      default:
        --pos_;
        return error("reserved additional information value");
    }
    if (data_.size() - pos_ < size) {
      return error("truncated head argument");
    }
    head.arg = 0;
    for (std::size_t i = 0; i < size; ++i) {
      head.arg = (head.arg << 8) | data_[pos_++];
    }
    return true;
  }

  bool read_item(Value& out, std::size_t depth) {
    const std::size_t item_start = pos_;
    Head head;
    if (!read_head(head)) {
      return false;
    }
    if (head.indefinite
        && (head.major == kMajorUnsigned || head.major == kMajorNegative
            || head.major == kMajorTag)) {
      pos_ = item_start;
      return error("indefinite length is not allowed for this major type");
    }
    switch (head.major) {
      case kMajorUnsigned:
        // cbor-x decodes exactly the 8-byte form as a JS bigint, shorter forms as numbers.
        if (head.info == 27) {
          out = Value(BigInt::from_uint64(head.arg));
        } else {
          out = Value(static_cast<std::int64_t>(head.arg));
        }
        return true;
      case kMajorNegative:
        if (head.info == 27) {
          out = Value(negative_bigint(head.arg));
        } else {
          out = Value(-1 - static_cast<std::int64_t>(head.arg));
        }
        return true;
      case kMajorBytes: {
        Bytes bytes;
        if (!read_string_payload(head, kMajorBytes, [&](std::span<const std::uint8_t> chunk) {
              bytes.insert(bytes.end(), chunk.begin(), chunk.end());
            })) {
          return false;
        }
        out = Value(std::move(bytes));
        return true;
      }
      case kMajorText: {
        std::string s;
        if (!read_string_payload(head, kMajorText, [&](std::span<const std::uint8_t> chunk) {
              s.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
            })) {
          return false;
        }
        if (!text::is_valid_utf8(s)) {
          pos_ = item_start;
          return error("invalid UTF-8 in a text string");
        }
        out = Value(std::move(s));
        return true;
      }
      case kMajorArray:
        return read_array(head, out, depth + 1, item_start);
      case kMajorMap:
        return read_map(head, out, depth + 1, item_start);
      case kMajorTag:
        return read_tagged(head.arg, out, depth + 1, item_start);
      case kMajorSimple:
      default:
        return read_simple(head, out, item_start);
    }
  }

  static BigInt negative_bigint(std::uint64_t n) {
    // The value is -1 - n, which reaches -2^64 for n = 2^64 - 1.
    if (n == std::numeric_limits<std::uint64_t>::max()) {
      return *BigInt::parse("-18446744073709551616");
    }
    // Built by insert, not "-" + std::to_string(...): g++ 12 at -O3 reports a false
    // -Wrestrict inside that operator+.
    std::string digits = std::to_string(n + 1);
    digits.insert(digits.begin(), '-');
    return *BigInt::parse(digits);
  }

  template <class Sink>
  bool read_string_payload(const Head& head, std::uint8_t major, Sink&& sink) {
    if (!head.indefinite) {
      return read_chunk(head.arg, sink);
    }
    // Indefinite: definite-length chunks of the same major type until a break byte.
    while (true) {
      if (pos_ >= data_.size()) {
        return error("unterminated indefinite-length string");
      }
      if (data_[pos_] == kBreak) {
        ++pos_;
        return true;
      }
      const std::size_t chunk_start = pos_;
      Head chunk;
      if (!read_head(chunk)) {
        return false;
      }
      if (chunk.major != major || chunk.indefinite) {
        pos_ = chunk_start;
        return error("invalid chunk in an indefinite-length string");
      }
      if (!read_chunk(chunk.arg, sink)) {
        return false;
      }
    }
  }

  template <class Sink>
  bool read_chunk(std::uint64_t length, Sink& sink) {
    if (length > data_.size() - pos_) {
      return error("string length " + std::to_string(length) + " exceeds the remaining "
                   + std::to_string(data_.size() - pos_) + " bytes");
    }
    const auto n = static_cast<std::size_t>(length);
    sink(data_.subspan(pos_, n));
    pos_ += n;
    return true;
  }

  // An announced element count is plausible only if each element could still have its byte.
  bool check_count(std::uint64_t count, std::uint64_t bytes_per_item) {
    if (count > limits_.max_items) {
      return error("container length " + std::to_string(count) + " exceeds the limit");
    }
    if (count > (data_.size() - pos_) / bytes_per_item) {
      return error("container length " + std::to_string(count)
                   + " exceeds what the remaining bytes can hold");
    }
    return true;
  }

  bool at_break() {
    if (pos_ < data_.size() && data_[pos_] == kBreak) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool read_array(const Head& head, Value& out, std::size_t depth, std::size_t item_start) {
    if (depth > limits_.max_depth) {
      pos_ = item_start;
      return error("nesting deeper than the limit");
    }
    Array items;
    if (head.indefinite) {
      while (!at_break()) {
        if (items.size() >= limits_.max_items) {
          return error("array has more items than the limit");
        }
        Value v;
        if (!read_item(v, depth)) {
          return false;
        }
        items.push_back(std::move(v));
      }
    } else {
      if (!check_count(head.arg, 1)) {
        return false;
      }
      const auto count = static_cast<std::size_t>(head.arg);
      items.reserve(std::min(count, kMaxReserve));
      for (std::size_t i = 0; i < count; ++i) {
        Value v;
        if (!read_item(v, depth)) {
          return false;
        }
        items.push_back(std::move(v));
      }
    }
    out = Value(std::move(items));
    return true;
  }

  bool read_map(const Head& head, Value& out, std::size_t depth, std::size_t item_start) {
    if (depth > limits_.max_depth) {
      pos_ = item_start;
      return error("nesting deeper than the limit");
    }
    ObjectBuilder obj;
    std::size_t entries = 0;
    auto read_entry = [&]() {
      const std::size_t key_start = pos_;
      Value key;
      if (!read_item(key, depth)) {
        return false;
      }
      std::string key_text;
      if (!property_key(key, key_text)) {
        pos_ = key_start;
        return error("map key of kind " + std::string(key.kind_name())
                     + " cannot be an object property");
      }
      Value v;
      if (!read_item(v, depth)) {
        return false;
      }
      obj.set(std::move(key_text), std::move(v));
      ++entries;
      return true;
    };
    if (head.indefinite) {
      while (!at_break()) {
        if (entries >= limits_.max_items) {
          return error("map has more entries than the limit");
        }
        if (!read_entry()) {
          return false;
        }
      }
    } else {
      if (!check_count(head.arg, 2)) {
        return false;
      }
      const auto count = static_cast<std::size_t>(head.arg);
      obj.reserve(std::min(count, kMaxReserve));
      for (std::size_t i = 0; i < count; ++i) {
        if (!read_entry()) {
          return false;
        }
      }
    }
    out = Value(obj.take());
    return true;
  }

  // cbor-x decodes maps into plain objects, so keys become JS property keys: numbers and other
  // primitives are stringified; byte strings and containers have no faithful key form.
  static bool property_key(const Value& key, std::string& out) {
    switch (key.kind()) {
      case Value::Kind::kString:
        out = key.as_string();
        return true;
      case Value::Kind::kInt:
        out = std::to_string(key.as_int());
        return true;
      case Value::Kind::kBigInt:
        out = key.as_bigint().decimal();
        return true;
      case Value::Kind::kDouble:
        text::append_js_number(key.as_double(), out);
        return true;
      case Value::Kind::kBool:
        out = key.as_bool() ? "true" : "false";
        return true;
      case Value::Kind::kNull:
        out = "null";
        return true;
      case Value::Kind::kUndefined:
        out = "undefined";
        return true;
      default:
        return false;
    }
  }

  bool read_tagged(std::uint64_t tag, Value& out, std::size_t depth, std::size_t item_start) {
    if (depth > limits_.max_depth) {
      pos_ = item_start;
      return error("nesting deeper than the limit");
    }
    Value inner;
    if (!read_item(inner, depth)) {
      return false;
    }
    if (tag == kTagPositiveBignum || tag == kTagNegativeBignum) {
      if (!inner.is_bytes()) {
        pos_ = item_start;
        return error("bignum tag without a byte string");
      }
      if (inner.as_bytes().size() > kMaxBignumBytes) {
        pos_ = item_start;
        return error("bignum larger than " + std::to_string(kMaxBignumBytes) + " bytes");
      }
      if (tag == kTagPositiveBignum) {
        out = Value(BigInt::from_magnitude(inner.as_bytes(), false));
      } else {
        out = Value(BigInt::from_magnitude(increment_magnitude(inner.as_bytes()), true));
      }
      return true;
    }
    if (tag >= kTagTypedArrayFirst && tag <= kTagTypedArrayLast) {
      // Typed arrays carry their raw little-endian element bytes; Value keeps only the bytes.
      if (!inner.is_bytes()) {
        pos_ = item_start;
        return error("typed array tag without a byte string");
      }
      out = std::move(inner);
      return true;
    }
    if (tag == kTagSet && !inner.is_array()) {
      pos_ = item_start;
      return error("set tag without an array");
    }
    if (tag == kTagMap && !inner.is_object()) {
      pos_ = item_start;
      return error("map tag without a map");
    }
    // Dates (0/1), sets, maps and unknown tags: the tagged item itself.
    out = std::move(inner);
    return true;
  }

  bool read_simple(const Head& head, Value& out, std::size_t item_start) {
    switch (head.info) {
      case 20:
        out = Value(false);
        return true;
      case 21:
        out = Value(true);
        return true;
      case 22:
        out = Value(nullptr);
        return true;
      case 23:
        out = Value(Undefined{});
        return true;
      case 25:
        out = Value(decode_half(static_cast<std::uint16_t>(head.arg)));
        return true;
      case 26: {
        const auto f = std::bit_cast<float>(static_cast<std::uint32_t>(head.arg));
        out = Value(static_cast<double>(f));
        return true;
      }
      case 27:
        out = Value(std::bit_cast<double>(head.arg));
        return true;
      case kInfoIndefinite:
        pos_ = item_start;
        return error("unexpected break");
      default:
        pos_ = item_start;
        return error("unsupported simple value");
    }
  }

  bool error(std::string message) {
    error_ = "invalid CBOR: " + std::move(message) + " at offset " + std::to_string(pos_);
    return false;
  }

  std::span<const std::uint8_t> data_;
  const DecodeLimits& limits_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace

Result<Value> cbor_decode(std::span<const std::uint8_t> data, const DecodeLimits& limits) {
  return CborReader(data, limits).decode_document();
}

Result<Value> cbor_decode(std::string_view data, const DecodeLimits& limits) {
  return cbor_decode(std::span<const std::uint8_t>(
                         reinterpret_cast<const std::uint8_t*>(data.data()), data.size()),
                     limits);
}

}  // namespace rivetkit::protocol
