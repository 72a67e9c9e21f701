// BARE primitives. The reader checks every length against the bytes that remain before copying,
// so a hostile length prefix fails instead of allocating.

#include "protocol/bare/bare.hpp"

#include "protocol/text/utf8.hpp"

#include <bit>
#include <cstring>

namespace rivetkit::protocol::bare {

namespace {

void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
  }
}

// A u64 needs at most 10 LEB128 groups of 7 bits; the tenth may only carry the top bit.
constexpr int kMaxVarintBytes = 10;

}  // namespace

void Writer::u8(std::uint8_t v) {
  out_.push_back(static_cast<char>(v));
}
void Writer::u16(std::uint16_t v) {
  put_le(out_, v, 2);
}
void Writer::u32(std::uint32_t v) {
  put_le(out_, v, 4);
}
void Writer::u64(std::uint64_t v) {
  put_le(out_, v, 8);
}
void Writer::i64(std::int64_t v) {
  put_le(out_, static_cast<std::uint64_t>(v), 8);
}
void Writer::f64(double v) {
  put_le(out_, std::bit_cast<std::uint64_t>(v), 8);
}

void Writer::uint(std::uint64_t v) {
  while (v >= 0x80u) {
    out_.push_back(static_cast<char>((v & 0x7Fu) | 0x80u));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void Writer::int_(std::int64_t v) {
  // Zigzag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ...
  const auto u = static_cast<std::uint64_t>(v);
  uint((u << 1) ^ (v < 0 ? ~std::uint64_t{0} : std::uint64_t{0}));
}

void Writer::boolean(bool v) {
  u8(v ? 1 : 0);
}

void Writer::str(std::string_view v) {
  data(v);
}

void Writer::data(std::string_view v) {
  uint(v.size());
  out_.append(v);
}

void Writer::data(std::span<const std::uint8_t> v) {
  uint(v.size());
  fixed(v);
}

void Writer::fixed(std::span<const std::uint8_t> v) {
  out_.append(reinterpret_cast<const char*>(v.data()), v.size());
}

namespace {

template <class T>
bool read_le(std::span<const std::uint8_t> in, std::size_t& pos, T& v) {
  if (in.size() - pos < sizeof(T)) {
    return false;
  }
  std::uint64_t acc = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    acc |= std::uint64_t{in[pos + i]} << (8 * i);
  }
  pos += sizeof(T);
  v = static_cast<T>(acc);
  return true;
}

}  // namespace

bool Reader::u8(std::uint8_t& v) {
  if (failed_ || !read_le(in_, pos_, v)) {
    return fail();
  }
  return true;
}

bool Reader::u16(std::uint16_t& v) {
  if (failed_ || !read_le(in_, pos_, v)) {
    return fail();
  }
  return true;
}

bool Reader::u32(std::uint32_t& v) {
  if (failed_ || !read_le(in_, pos_, v)) {
    return fail();
  }
  return true;
}

bool Reader::u64(std::uint64_t& v) {
  if (failed_ || !read_le(in_, pos_, v)) {
    return fail();
  }
  return true;
}

bool Reader::i64(std::int64_t& v) {
  std::uint64_t u = 0;
  if (!u64(u)) {
    return false;
  }
  v = static_cast<std::int64_t>(u);
  return true;
}

bool Reader::f64(double& v) {
  std::uint64_t u = 0;
  if (!u64(u)) {
    return false;
  }
  v = std::bit_cast<double>(u);
  return true;
}

bool Reader::uint(std::uint64_t& v) {
  if (failed_) {
    return false;
  }
  std::uint64_t acc = 0;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    if (pos_ >= in_.size()) {
      return fail();
    }
    const std::uint8_t b = in_[pos_++];
    if (i == kMaxVarintBytes - 1 && b > 1) {
      return fail();  // more than 64 bits
    }
    acc |= std::uint64_t{b & 0x7Fu} << (7 * i);
    if ((b & 0x80u) == 0) {
      v = acc;
      return true;
    }
  }
  return fail();
}

bool Reader::int_(std::int64_t& v) {
  std::uint64_t u = 0;
  if (!uint(u)) {
    return false;
  }
  v = static_cast<std::int64_t>((u >> 1) ^ (~(u & 1) + 1));
  return true;
}

bool Reader::boolean(bool& v) {
  std::uint8_t b = 0;
  if (!u8(b)) {
    return false;
  }
  if (b > 1) {
    return fail();
  }
  v = b == 1;
  return true;
}

bool Reader::str(std::string& v) {
  if (!data(v)) {
    return false;
  }
  if (!text::is_valid_utf8(v)) {
    return fail();
  }
  return true;
}

bool Reader::data(std::string& v) {
  std::uint64_t len = 0;
  if (!uint(len)) {
    return false;
  }
  if (len > remaining()) {
    return fail();
  }
  const auto n = static_cast<std::size_t>(len);
  v.assign(reinterpret_cast<const char*>(in_.data() + pos_), n);
  pos_ += n;
  return true;
}

bool Reader::data(std::vector<std::uint8_t>& v) {
  std::uint64_t len = 0;
  if (!uint(len)) {
    return false;
  }
  if (len > remaining()) {
    return fail();
  }
  const auto n = static_cast<std::size_t>(len);
  v.assign(in_.begin() + static_cast<std::ptrdiff_t>(pos_),
           in_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
  pos_ += n;
  return true;
}

bool Reader::fixed(std::span<std::uint8_t> v) {
  if (failed_ || v.size() > remaining()) {
    return fail();
  }
  if (!v.empty()) {
    std::memcpy(v.data(), in_.data() + pos_, v.size());
  }
  pos_ += v.size();
  return true;
}

bool Reader::optional_tag(bool& present) {
  return boolean(present);
}

}  // namespace rivetkit::protocol::bare
