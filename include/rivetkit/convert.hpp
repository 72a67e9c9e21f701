#pragma once
/// Conversions between C++ types and rivetkit::Value.
///
/// Built in: Value, bool, every integer type (range-checked), float/double, std::string, Bytes,
/// std::vector<T>, std::optional<T> (null/undefined <-> nullopt), std::map<std::string, T>,
/// std::unordered_map<std::string, T>, and std::monostate (null).
///
/// A struct becomes convertible with one line at namespace scope:
///
///     struct CounterState { std::int64_t count = 0; };
///     RIVETKIT_FIELDS(CounterState, count)
///
/// It maps to an object with those keys. When decoding, missing keys keep the member's default
/// (so state written by an older version of the struct still loads) and unknown keys are ignored.
/// Other types customise by providing, in their namespace,
///     void rivetkit_to_value(const T&, rivetkit::Value&);
///     void rivetkit_from_value(const rivetkit::Value&, T&);   // throws rivetkit::ConversionError
/// Mismatches throw ConversionError; at the action boundary it becomes a client-visible
/// `actor.invalid_request` error naming the argument, never a crash.

#include <rivetkit/value.hpp>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace rivetkit {

class ConversionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class T, class Enable = void>
struct Convert;

template <class T>
Value to_value(const T& v) {
  Value out;
  Convert<std::remove_cvref_t<T>>::to(v, out);
  return out;
}

template <class T>
T from_value(const Value& v) {
  T out{};
  Convert<T>::from(v, out);
  return out;
}

namespace detail {
[[noreturn]] void throw_conversion(std::string_view expected, const Value& got);
}  // namespace detail

template <>
struct Convert<Value> {
  static void to(const Value& v, Value& out) { out = v; }
  static void from(const Value& v, Value& out) { out = v; }
};

template <>
struct Convert<std::monostate> {
  static void to(const std::monostate&, Value& out) { out = Value{}; }
  static void from(const Value&, std::monostate&) {}
};

template <>
struct Convert<bool> {
  static void to(bool v, Value& out) { out = Value{v}; }
  static void from(const Value& v, bool& out) {
    if (!v.is_bool()) {
      detail::throw_conversion("boolean", v);
    }
    out = v.as_bool();
  }
};

template <class I>
requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) struct Convert<I> {
  static void to(I v, Value& out) { out = Value{v}; }
  static void from(const Value& v, I& out) {
    // Accepts ints, bigints that fit, and integral doubles (JS numbers are doubles).
    if (v.is_int()) {
      std::int64_t i = v.as_int();
      if (std::in_range<I>(i)) {
        out = static_cast<I>(i);
        return;
      }
    } else if (v.is_bigint()) {
      if constexpr (std::is_signed_v<I>) {
        if (auto i = v.as_bigint().to_int64(); i && std::in_range<I>(*i)) {
          out = static_cast<I>(*i);
          return;
        }
      } else {
        if (auto u = v.as_bigint().to_uint64(); u && std::in_range<I>(*u)) {
          out = static_cast<I>(*u);
          return;
        }
      }
    } else if (v.is_double()) {
      double d = v.as_double();
      // 2^63 is exactly representable; anything >= it cannot fit int64.
      if (std::isfinite(d) && std::trunc(d) == d && d >= -9223372036854775808.0
          && d < 9223372036854775808.0) {
        auto i = static_cast<std::int64_t>(d);
        if (std::in_range<I>(i)) {
          out = static_cast<I>(i);
          return;
        }
      }
    }
    detail::throw_conversion("integer in range", v);
  }
};

template <class F>
requires std::is_floating_point_v<F>
struct Convert<F> {
  static void to(F v, Value& out) { out = Value{static_cast<double>(v)}; }
  static void from(const Value& v, F& out) {
    if (v.is_double()) {
      out = static_cast<F>(v.as_double());
    } else if (v.is_int()) {
      out = static_cast<F>(v.as_int());
    } else {
      detail::throw_conversion("number", v);
    }
  }
};

template <>
struct Convert<std::string> {
  static void to(const std::string& v, Value& out) { out = Value{v}; }
  static void from(const Value& v, std::string& out) {
    if (!v.is_string()) {
      detail::throw_conversion("string", v);
    }
    out = v.as_string();
  }
};

template <>
struct Convert<const char*> {
  static void to(const char* v, Value& out) { out = Value{v}; }
};

template <std::size_t N>
struct Convert<char[N]> {
  static void to(const char (&v)[N], Value& out) { out = Value{static_cast<const char*>(v)}; }
};

template <>
struct Convert<Bytes> {
  static void to(const Bytes& v, Value& out) { out = Value{v}; }
  static void from(const Value& v, Bytes& out) {
    if (!v.is_bytes()) {
      detail::throw_conversion("bytes", v);
    }
    out = v.as_bytes();
  }
};

template <>
struct Convert<BigInt> {
  static void to(const BigInt& v, Value& out) { out = Value{v}; }
  static void from(const Value& v, BigInt& out) {
    if (v.is_bigint()) {
      out = v.as_bigint();
    } else if (v.is_int()) {
      out = BigInt::from_int64(v.as_int());
    } else {
      detail::throw_conversion("bigint", v);
    }
  }
};

template <class T>
struct Convert<std::optional<T>> {
  static void to(const std::optional<T>& v, Value& out) {
    if (v) {
      Convert<T>::to(*v, out);
    } else {
      out = Value{};
    }
  }
  static void from(const Value& v, std::optional<T>& out) {
    if (v.is_null() || v.is_undefined()) {
      out.reset();
    } else {
      T inner{};
      Convert<T>::from(v, inner);
      out = std::move(inner);
    }
  }
};

template <class T>
requires(!std::is_same_v<T, std::uint8_t>) struct Convert<std::vector<T>> {
  static void to(const std::vector<T>& v, Value& out) {
    Array arr;
    arr.reserve(v.size());
    for (const auto& item : v) {
      arr.push_back(to_value(item));
    }
    out = Value{std::move(arr)};
  }
  static void from(const Value& v, std::vector<T>& out) {
    if (!v.is_array()) {
      detail::throw_conversion("array", v);
    }
    out.clear();
    out.reserve(v.as_array().size());
    for (const auto& item : v.as_array()) {
      out.push_back(from_value<T>(item));
    }
  }
};

template <class Map>
struct ConvertStringMap {
  static void to(const Map& m, Value& out) {
    Value obj{Object{}};
    for (const auto& [k, val] : m) {
      obj.set(k, to_value(val));
    }
    out = std::move(obj);
  }
  static void from(const Value& v, Map& out) {
    if (!v.is_object()) {
      detail::throw_conversion("object", v);
    }
    out.clear();
    for (const auto& member : v.as_object()) {
      out.emplace(member.key, from_value<typename Map::mapped_type>(member.value));
    }
  }
};

template <class T>
struct Convert<std::map<std::string, T>> : ConvertStringMap<std::map<std::string, T>> {};
template <class T>
struct Convert<std::unordered_map<std::string, T>>
    : ConvertStringMap<std::unordered_map<std::string, T>> {};

/// Types that provide rivetkit_to_value / rivetkit_from_value (found by ADL), e.g. through
/// RIVETKIT_FIELDS.
template <class T>
requires requires(const T& t, T& m, Value& v, const Value& cv) {
  rivetkit_to_value(t, v);
  rivetkit_from_value(cv, m);
}
struct Convert<T> {
  static void to(const T& t, Value& out) { rivetkit_to_value(t, out); }
  static void from(const Value& v, T& out) { rivetkit_from_value(v, out); }
};

namespace detail {

template <class T>
void field_to(Value& obj, std::string_view key, const T& member) {
  obj.set(key, to_value(member));
}

template <class T>
void field_from(const Value& obj, std::string_view key, T& member) {
  if (const Value* v = obj.find(key); v != nullptr && !v->is_undefined()) {
    try {
      Convert<T>::from(*v, member);
    } catch (const ConversionError& e) {
      throw ConversionError("field '" + std::string(key) + "': " + e.what());
    }
  }
}

void require_object(const Value& v);

}  // namespace detail

}  // namespace rivetkit

// ---- RIVETKIT_FIELDS ---------------------------------------------------------------------------
// Preprocessor for-each over up to 64 members (C++20 __VA_OPT__ recursion).
#define RIVETKIT_PP_PARENS ()
#define RIVETKIT_PP_EXPAND(...) \
  RIVETKIT_PP_EXPAND3(RIVETKIT_PP_EXPAND3(RIVETKIT_PP_EXPAND3(RIVETKIT_PP_EXPAND3(__VA_ARGS__))))
#define RIVETKIT_PP_EXPAND3(...) \
  RIVETKIT_PP_EXPAND2(RIVETKIT_PP_EXPAND2(RIVETKIT_PP_EXPAND2(RIVETKIT_PP_EXPAND2(__VA_ARGS__))))
#define RIVETKIT_PP_EXPAND2(...) \
  RIVETKIT_PP_EXPAND1(RIVETKIT_PP_EXPAND1(RIVETKIT_PP_EXPAND1(RIVETKIT_PP_EXPAND1(__VA_ARGS__))))
#define RIVETKIT_PP_EXPAND1(...) __VA_ARGS__
#define RIVETKIT_PP_FOR_EACH(macro, ...) \
  __VA_OPT__(RIVETKIT_PP_EXPAND(RIVETKIT_PP_FOR_EACH_HELPER(macro, __VA_ARGS__)))
#define RIVETKIT_PP_FOR_EACH_HELPER(macro, a1, ...) \
  macro(a1) __VA_OPT__(RIVETKIT_PP_FOR_EACH_AGAIN RIVETKIT_PP_PARENS(macro, __VA_ARGS__))
#define RIVETKIT_PP_FOR_EACH_AGAIN() RIVETKIT_PP_FOR_EACH_HELPER

#define RIVETKIT_PP_FIELD_TO(field) \
  ::rivetkit::detail::field_to(rivetkit_out, #field, rivetkit_in.field);
#define RIVETKIT_PP_FIELD_FROM(field) \
  ::rivetkit::detail::field_from(rivetkit_in, #field, rivetkit_out.field);

#define RIVETKIT_PP_FIELD_DESCRIBE(member) \
  rivetkit_sink.template add<decltype(RivetkitFieldsType::member)>(#member);

/// Makes `Type` convertible to and from an object Value with the listed members, and describes
/// them for the registry's TypeScript declarations (typescript.hpp: `interface Type {...}`).
/// Use at namespace scope, in the namespace of `Type`.
#define RIVETKIT_FIELDS(Type, ...)                                                           \
  [[maybe_unused]] inline void rivetkit_to_value(const Type& rivetkit_in,                    \
                                                 ::rivetkit::Value& rivetkit_out) {          \
    rivetkit_out = ::rivetkit::Value{::rivetkit::Object{}};                                  \
    RIVETKIT_PP_FOR_EACH(RIVETKIT_PP_FIELD_TO, __VA_ARGS__)                                  \
  }                                                                                          \
  [[maybe_unused]] inline void rivetkit_from_value(const ::rivetkit::Value& rivetkit_in,     \
                                                   Type& rivetkit_out) {                     \
    ::rivetkit::detail::require_object(rivetkit_in);                                         \
    RIVETKIT_PP_FOR_EACH(RIVETKIT_PP_FIELD_FROM, __VA_ARGS__)                                \
  }                                                                                          \
  [[maybe_unused]] inline const char* rivetkit_fields_name(const Type*) {                    \
    return #Type;                                                                            \
  }                                                                                          \
  template <class RivetkitSink>                                                              \
  [[maybe_unused]] void rivetkit_describe_fields(const Type*, RivetkitSink& rivetkit_sink) { \
    using RivetkitFieldsType = Type;                                                         \
    RIVETKIT_PP_FOR_EACH(RIVETKIT_PP_FIELD_DESCRIBE, __VA_ARGS__)                            \
  }
