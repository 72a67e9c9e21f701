#pragma once
/// rivetkit::Value: the data model shared by the json, cbor and bare payloads of the RivetKit
/// client protocol (RivetKit 2.3.19, protocol version 4). Action arguments, results, event
/// arguments, state, input and connection params all travel as Values.
///
/// Kinds map to JavaScript values as the official clients see them:
///   undefined, null, bool, int (64-bit signed integer; a JS number), bigint (a JS bigint of any
///   size), double (a JS number), string (UTF-8), bytes (Uint8Array), array, object (insertion
///   ordered string keys).
/// Values are plain copyable data; they are not thread-safe beyond that.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace rivetkit {

/// JavaScript `undefined`. JSON has no undefined; the encoders follow JSON.stringify (dropped in
/// objects, null in arrays) or the `["$Undefined",0]` compat tag, as the protocol requires.
struct Undefined {
  bool operator==(const Undefined&) const = default;
};

/// An arbitrary-precision integer (a JS bigint), kept as a canonical decimal string:
/// an optional '-' followed by digits without leading zeros ("0", "-12", "184467440737095516160").
class BigInt {
 public:
  BigInt() = default;
  static BigInt from_int64(std::int64_t v);
  static BigInt from_uint64(std::uint64_t v);
  /// Parses a decimal string (optional sign). Returns nullopt for anything else.
  static std::optional<BigInt> parse(std::string_view text);
  /// From a big-endian unsigned magnitude (CBOR tags 2/3).
  static BigInt from_magnitude(const std::vector<std::uint8_t>& be, bool negative);

  const std::string& decimal() const { return decimal_; }
  bool negative() const { return !decimal_.empty() && decimal_[0] == '-'; }
  std::optional<std::int64_t> to_int64() const;
  std::optional<std::uint64_t> to_uint64() const;
  /// Big-endian magnitude without leading zero bytes (empty for 0).
  std::vector<std::uint8_t> magnitude() const;

  bool operator==(const BigInt&) const = default;

 private:
  std::string decimal_ = "0";
};

using Bytes = std::vector<std::uint8_t>;

class Value;
struct Member;
using Array = std::vector<Value>;
/// Object members in insertion order. Keys are unique (the decoders keep the last duplicate).
using Object = std::vector<Member>;

class Value {
 public:
  enum class Kind {
    kUndefined,
    kNull,
    kBool,
    kInt,
    kBigInt,
    kDouble,
    kString,
    kBytes,
    kArray,
    kObject
  };

  // The constructors are defined after Member (below): constructing the variant instantiates the
  // destructor of every alternative, Object's included, and a body here would do that while
  // Member is still incomplete (clang with libstdc++ rejects it; GCC happens to defer it).
  Value();
  Value(std::nullptr_t);
  Value(Undefined u);
  Value(bool b);
  template <class I>
  requires(std::is_integral_v<I> && !std::is_same_v<I, bool> && std::is_signed_v<I>) Value(I i);
  /// Unsigned integers above INT64_MAX become a bigint.
  template <class U>
  requires(std::is_integral_v<U> && !std::is_same_v<U, bool> && std::is_unsigned_v<U>) Value(U u);
  Value(double d);
  Value(float f);
  Value(BigInt b);
  Value(std::string s);
  Value(std::string_view s);
  Value(const char* s);
  Value(Bytes b);
  Value(Array a);
  Value(Object o);

  /// Builds an object: Value::object({{"a", 1}, {"b", "x"}}).
  static Value object(std::initializer_list<std::pair<std::string_view, Value>> members);
  /// Builds an array: Value::array({1, "two"}).
  static Value array(std::initializer_list<Value> items);

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  /// "undefined", "null", "bool", "int", "bigint", "double", "string", "bytes", "array", "object".
  std::string_view kind_name() const;

  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_null() const { return kind() == Kind::kNull; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_bigint() const { return kind() == Kind::kBigInt; }
  bool is_double() const { return kind() == Kind::kDouble; }
  /// int, bigint or double.
  bool is_number() const { return is_int() || is_double() || is_bigint(); }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_bytes() const { return kind() == Kind::kBytes; }
  bool is_array() const { return kind() == Kind::kArray; }
  bool is_object() const { return kind() == Kind::kObject; }

  /// Accessors. Calling one for the wrong kind throws std::bad_variant_access.
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  const BigInt& as_bigint() const { return std::get<BigInt>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  std::string& as_string() { return std::get<std::string>(v_); }
  const Bytes& as_bytes() const { return std::get<Bytes>(v_); }
  Bytes& as_bytes() { return std::get<Bytes>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  Array& as_array() { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  /// Object lookup; nullptr when this is not an object or the key is absent.
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  /// Object member access; turns null into an empty object and inserts missing keys as null.
  Value& operator[](std::string_view key);
  /// Sets (replaces or appends) an object member.
  void set(std::string_view key, Value v);

  bool operator==(const Value& other) const;

 private:
  using Storage = std::variant<Undefined,
                               std::nullptr_t,
                               bool,
                               std::int64_t,
                               BigInt,
                               double,
                               std::string,
                               Bytes,
                               Array,
                               Object>;
  static Storage from_unsigned(std::uint64_t u);
  Storage v_;
};

struct Member {
  std::string key;
  Value value;
  bool operator==(const Member&) const = default;
};

inline Value::Value() : v_(nullptr) {}
inline Value::Value(std::nullptr_t) : v_(nullptr) {}
inline Value::Value(Undefined u) : v_(u) {}
inline Value::Value(bool b) : v_(b) {}
template <class I>
requires(std::is_integral_v<
             I> && !std::is_same_v<I, bool> && std::is_signed_v<I>) inline Value::Value(I i)
    : v_(static_cast<std::int64_t>(i)) {}
template <class U>
requires(std::is_integral_v<
             U> && !std::is_same_v<U, bool> && std::is_unsigned_v<U>) inline Value::Value(U u)
    : v_(from_unsigned(static_cast<std::uint64_t>(u))) {}
inline Value::Value(double d) : v_(d) {}
inline Value::Value(float f) : v_(static_cast<double>(f)) {}
inline Value::Value(BigInt b) : v_(std::move(b)) {}
inline Value::Value(std::string s) : v_(std::move(s)) {}
inline Value::Value(std::string_view s) : v_(std::string(s)) {}
inline Value::Value(const char* s) : v_(std::string(s)) {}
inline Value::Value(Bytes b) : v_(std::move(b)) {}
inline Value::Value(Array a) : v_(std::move(a)) {}
inline Value::Value(Object o) : v_(std::move(o)) {}

/// Debug text for logs and test failures (JSON-like; not a wire format).
std::string to_debug_string(const Value& v);

}  // namespace rivetkit
