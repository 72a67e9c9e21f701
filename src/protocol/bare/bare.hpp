#pragma once
// BARE primitives (https://baremessages.org): a writer appending to a byte string and a reader
// over a byte span with explicit bounds. Used by the client protocol (v1..v4) now and the envoy
// protocol (v8) later.
//
// Reader methods return false (and leave the reader failed) on truncated input, over-long
// varints (> 10 bytes / > 64 bits), lengths beyond what remains, or invalid UTF-8 in `str`.
// Once failed, every further read fails too, so a decoder may check only at the end. A Reader
// does not own its input: the bytes must outlive it (never construct one from a temporary
// std::string). Non-minimal varints are accepted.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::protocol::bare {

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void u8(std::uint8_t v);
  void u16(std::uint16_t v);  // little endian
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void i64(std::int64_t v);
  void f64(double v);
  void uint(std::uint64_t v);  // LEB128
  void int_(std::int64_t v);   // zigzag LEB128
  void boolean(bool v);
  void str(std::string_view v);
  void data(std::string_view v);
  void data(std::span<const std::uint8_t> v);
  void fixed(std::span<const std::uint8_t> v);  // data[N]: no length
  /// optional<T>: writes the presence byte; the caller writes T when present.
  void optional_tag(bool present) { u8(present ? 1 : 0); }

 private:
  std::string& out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  explicit Reader(std::string_view in)
      : in_(reinterpret_cast<const std::uint8_t*>(in.data()), in.size()) {}

  bool u8(std::uint8_t& v);
  bool u16(std::uint16_t& v);
  bool u32(std::uint32_t& v);
  bool u64(std::uint64_t& v);
  bool i64(std::int64_t& v);
  bool f64(double& v);
  bool uint(std::uint64_t& v);
  bool int_(std::int64_t& v);
  bool boolean(bool& v);  // only 0 or 1
  bool str(std::string& v);
  bool data(std::string& v);
  bool data(std::vector<std::uint8_t>& v);
  bool fixed(std::span<std::uint8_t> v);
  /// Reads an optional presence byte (0 or 1).
  bool optional_tag(bool& present);

  std::size_t remaining() const { return in_.size() - pos_; }
  bool at_end() const { return pos_ == in_.size(); }
  bool failed() const { return failed_; }

 private:
  bool fail() {
    failed_ = true;
    return false;
  }
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace rivetkit::protocol::bare
