#pragma once
/// TypeScript types of C++ values, for the `.d.ts` a registry describes itself with
/// (`Registry::type_declarations()`, `--emit-types`): what the official client receives and sends
/// for each C++ type, as the conversions in convert.hpp map them.
///
///     bool -> boolean        integers, floating point -> number    rivetkit::BigInt -> bigint
///     std::string -> string  rivetkit::Bytes -> Uint8Array          std::optional<T> -> T | null
///     std::vector<T> -> T[]  std::map<std::string, T> -> Record<string, T>
///     RIVETKIT_FIELDS(S, a, b) -> interface S { a: ...; b: ... }    anything else -> unknown
///
/// Integers are `number`: 64-bit values beyond 2^53 arrive as `bigint` in the cbor and bare
/// encodings. A type with its own conversion (rivetkit_to_value) can name its TypeScript type by
/// also providing, in its namespace, `std::string rivetkit_ts_type(const T*,
/// rivetkit::TsDeclarations&)`.

#include <rivetkit/value.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rivetkit {

class TsDeclarations;

namespace detail {
template <class T>
struct TsType;
}  // namespace detail

/// The named interfaces a set of TypeScript type expressions needs, in the order first used.
class TsDeclarations {
 public:
  struct Field {
    std::string name;
    std::string type;
  };
  struct Interface {
    std::string name;
    std::vector<Field> fields;
  };

  /// The TypeScript type of T, declaring the interfaces it uses.
  template <class T>
  std::string type_of() {
    return detail::TsType<std::remove_cvref_t<T>>::name(*this);
  }

  /// Declares the interface of the type identified by `tag` under `wanted` (or `wanted2`, ... when
  /// another type took the name) and returns its name. `describe` fills in its fields once.
  template <class Describe>
  std::string declare(const void* tag, std::string_view wanted, Describe&& describe) {
    if (auto it = by_tag_.find(tag); it != by_tag_.end()) {
      return interfaces_[it->second].name;
    }
    std::size_t index = reserve(tag, wanted);
    std::vector<Field> fields;
    describe(fields);
    interfaces_[index].fields = std::move(fields);
    return interfaces_[index].name;
  }

  /// A name no interface uses yet, from `wanted` (for the caller's own declarations).
  std::string unique_name(std::string_view wanted);

  const std::vector<Interface>& interfaces() const { return interfaces_; }

 private:
  std::size_t reserve(const void* tag, std::string_view wanted);

  std::vector<Interface> interfaces_;
  std::map<const void*, std::size_t> by_tag_;
  std::map<std::string, const void*, std::less<>> names_;
};

/// One parameter of an action, as the client passes it.
struct TsParameter {
  std::string type;
  bool optional = false;  ///< may be left out (std::optional, rivetkit::Value)
  bool rest = false;      ///< rivetkit::RestArgs: every remaining argument
};

/// An action's parameters after the context, and what its promise resolves to.
struct TsSignature {
  std::vector<TsParameter> params;
  std::string result;
};

namespace detail {

/// `T[]`, with the parentheses a union element needs.
std::string ts_array_of(const std::string& element);

template <class T>
inline constexpr char kTsTypeTag = 0;

/// Collects a RIVETKIT_FIELDS struct's fields (the macro's rivetkit_describe_fields calls it).
class TsFieldSink {
 public:
  TsFieldSink(TsDeclarations& ts, std::vector<TsDeclarations::Field>& fields)
      : ts_(ts), fields_(fields) {}
  template <class T>
  void add(const char* name) {
    fields_.push_back({name, ts_.type_of<T>()});
  }

 private:
  TsDeclarations& ts_;
  std::vector<TsDeclarations::Field>& fields_;
};

template <class T>
struct TsType {
  static std::string name(TsDeclarations& ts) {
    if constexpr (requires(const T* p) { rivetkit_ts_type(p, ts); }) {
      return rivetkit_ts_type(static_cast<const T*>(nullptr), ts);
    } else if constexpr (requires(const T* p, TsFieldSink& sink) {
                           rivetkit_describe_fields(p, sink);
                           rivetkit_fields_name(p);
                         }) {
      return ts.declare(&kTsTypeTag<T>, rivetkit_fields_name(static_cast<const T*>(nullptr)),
                        [&ts](std::vector<TsDeclarations::Field>& fields) {
                          TsFieldSink sink(ts, fields);
                          rivetkit_describe_fields(static_cast<const T*>(nullptr), sink);
                        });
    } else if constexpr (std::is_same_v<T, bool>) {
      return "boolean";
    } else if constexpr (std::is_arithmetic_v<T>) {
      return "number";
    } else if constexpr (std::is_same_v<T, BigInt>) {
      return "bigint";
    } else if constexpr (
        std::is_same_v<
            T,
            std::
                string> || std::is_same_v<T, std::string_view> || std::is_same_v<T, const char*> || std::is_same_v<T, char*>) {
      return "string";
    } else if constexpr (std::is_same_v<T, Bytes>) {
      return "Uint8Array";
    } else if constexpr (std::is_same_v<T, Undefined>) {
      return "undefined";
    } else if constexpr (std::is_same_v<T, std::monostate>) {
      return "null";
    } else {
      return "unknown";
    }
  }
};
template <std::size_t N>
struct TsType<char[N]> {
  static std::string name(TsDeclarations&) { return "string"; }
};
template <class T>
struct TsType<std::optional<T>> {
  static std::string name(TsDeclarations& ts) { return ts.type_of<T>() + " | null"; }
};
template <class T>
requires(!std::is_same_v<T, std::uint8_t>) struct TsType<std::vector<T>> {
  static std::string name(TsDeclarations& ts) { return ts_array_of(ts.type_of<T>()); }
};
template <class T>
struct TsType<std::map<std::string, T>> {
  static std::string name(TsDeclarations& ts) { return "Record<string, " + ts.type_of<T>() + ">"; }
};
template <class T>
struct TsType<std::unordered_map<std::string, T>> {
  static std::string name(TsDeclarations& ts) { return "Record<string, " + ts.type_of<T>() + ">"; }
};

}  // namespace detail
}  // namespace rivetkit
