// Value -> CBOR with minimal heads, choosing number forms so that cbor-x on the client decodes
// each value to the same JS type it had on our side (see cbor.hpp).

#include "protocol/cbor/cbor.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace rivetkit::protocol {

namespace {

constexpr std::uint8_t kMajorUnsigned = 0;
constexpr std::uint8_t kMajorNegative = 1;
constexpr std::uint8_t kMajorBytes = 2;
constexpr std::uint8_t kMajorText = 3;
constexpr std::uint8_t kMajorArray = 4;
constexpr std::uint8_t kMajorMap = 5;
constexpr std::uint8_t kMajorTag = 6;

constexpr std::uint64_t kTagPositiveBignum = 2;
constexpr std::uint64_t kTagNegativeBignum = 3;

constexpr std::int64_t kTwoPow32 = std::int64_t{1} << 32;
constexpr std::int64_t kTwoPow53 = std::int64_t{1} << 53;

void put_be(std::uint64_t v, int bytes, std::string& out) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xFFu));
  }
}

std::uint8_t initial_byte(std::uint8_t major, std::uint8_t info) {
  return static_cast<std::uint8_t>((major << 5) | info);
}

void write_head(std::uint8_t major, std::uint64_t arg, std::string& out) {
  if (arg < 24) {
    out.push_back(static_cast<char>(initial_byte(major, static_cast<std::uint8_t>(arg))));
  } else if (arg <= 0xFFu) {
    out.push_back(static_cast<char>(initial_byte(major, 24)));
    put_be(arg, 1, out);
  } else if (arg <= 0xFFFFu) {
    out.push_back(static_cast<char>(initial_byte(major, 25)));
    put_be(arg, 2, out);
  } else if (arg <= 0xFFFFFFFFu) {
    out.push_back(static_cast<char>(initial_byte(major, 26)));
    put_be(arg, 4, out);
  } else {
    out.push_back(static_cast<char>(initial_byte(major, 27)));
    put_be(arg, 8, out);
  }
}

// The 8-byte form, which cbor-x decodes as a bigint whatever the value.
void write_head_64(std::uint8_t major, std::uint64_t arg, std::string& out) {
  out.push_back(static_cast<char>(initial_byte(major, 27)));
  put_be(arg, 8, out);
}

void write_float64(double d, std::string& out) {
  out.push_back(static_cast<char>(0xFB));
  put_be(std::bit_cast<std::uint64_t>(d), 8, out);
}

void write_bytes(std::uint8_t major, std::span<const std::uint8_t> bytes, std::string& out) {
  write_head(major, bytes.size(), out);
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void write_int(std::int64_t v, std::string& out) {
  if (v >= 0) {
    if (v < kTwoPow32) {
      write_head(kMajorUnsigned, static_cast<std::uint64_t>(v), out);
    } else if (v <= kTwoPow53) {
      write_float64(static_cast<double>(v), out);
    } else {
      write_head_64(kMajorUnsigned, static_cast<std::uint64_t>(v), out);
    }
    return;
  }
  // -1 - v cannot overflow for negative v.
  const auto n = static_cast<std::uint64_t>(-(v + 1));
  if (v >= -kTwoPow32) {
    write_head(kMajorNegative, n, out);
  } else if (v >= -kTwoPow53) {
    write_float64(static_cast<double>(v), out);
  } else {
    write_head_64(kMajorNegative, n, out);
  }
}

// Big-endian magnitude - 1; the input is non-zero.
Bytes decrement_magnitude(Bytes mag) {
  for (auto it = mag.rbegin(); it != mag.rend(); ++it) {
    if (*it != 0) {
      --*it;
      break;
    }
    *it = 0xFF;
  }
  while (!mag.empty() && mag.front() == 0) {
    mag.erase(mag.begin());
  }
  return mag;
}

std::uint64_t magnitude_to_u64(const Bytes& mag) {
  std::uint64_t v = 0;
  for (auto b : mag) {
    v = (v << 8) | b;
  }
  return v;
}

void write_bigint(const BigInt& b, std::string& out) {
  if (auto u = b.to_uint64()) {
    write_head_64(kMajorUnsigned, *u, out);
    return;
  }
  if (auto i = b.to_int64()) {
    write_head_64(kMajorNegative, static_cast<std::uint64_t>(-(*i + 1)), out);
    return;
  }
  // Outside int64/uint64: either a 3b head (down to -2^64) or a bignum tag.
  Bytes mag = b.magnitude();
  if (!b.negative()) {
    write_head(kMajorTag, kTagPositiveBignum, out);
    write_bytes(kMajorBytes, mag, out);
    return;
  }
  mag = decrement_magnitude(std::move(mag));
  if (mag.size() <= 8) {
    write_head_64(kMajorNegative, magnitude_to_u64(mag), out);
    return;
  }
  write_head(kMajorTag, kTagNegativeBignum, out);
  write_bytes(kMajorBytes, mag, out);
}

void write_double(double d, std::string& out) {
  // cbor-x writes integral numbers in [-2^32, 2^32) as integers (-0 as 0).
  if (std::isfinite(d) && d == std::trunc(d) && d >= -4294967296.0 && d < 4294967296.0) {
    if (d >= 0) {
      write_head(kMajorUnsigned, static_cast<std::uint64_t>(d), out);
    } else {
      write_head(kMajorNegative, static_cast<std::uint64_t>(-1.0 - d), out);
    }
    return;
  }
  write_float64(d, out);
}

void write_value(const Value& v, std::string& out) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      out.push_back(static_cast<char>(0xF7));
      return;
    case Value::Kind::kNull:
      out.push_back(static_cast<char>(0xF6));
      return;
    case Value::Kind::kBool:
      out.push_back(static_cast<char>(v.as_bool() ? 0xF5 : 0xF4));
      return;
    case Value::Kind::kInt:
      write_int(v.as_int(), out);
      return;
    case Value::Kind::kBigInt:
      write_bigint(v.as_bigint(), out);
      return;
    case Value::Kind::kDouble:
      write_double(v.as_double(), out);
      return;
    case Value::Kind::kString: {
      const auto& s = v.as_string();
      write_head(kMajorText, s.size(), out);
      out += s;
      return;
    }
    case Value::Kind::kBytes:
      write_bytes(kMajorBytes, v.as_bytes(), out);
      return;
    case Value::Kind::kArray:
      write_head(kMajorArray, v.as_array().size(), out);
      for (const auto& item : v.as_array()) {
        write_value(item, out);
      }
      return;
    case Value::Kind::kObject:
      write_head(kMajorMap, v.as_object().size(), out);
      for (const auto& m : v.as_object()) {
        write_head(kMajorText, m.key.size(), out);
        out += m.key;
        write_value(m.value, out);
      }
      return;
  }
}

}  // namespace

void cbor_encode_to(const Value& v, std::string& out) {
  write_value(v, out);
}

std::string cbor_encode(const Value& v) {
  std::string out;
  write_value(v, out);
  return out;
}

}  // namespace rivetkit::protocol
