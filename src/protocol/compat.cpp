// RivetKit's `$`-tagging of values that JSON (and, for the client, cbor-x payloads) cannot carry
// natively. Mirrors encodeJsonCompatValue / jsonStringifyCompat / reviveJsonCompatValue in
// npm rivetkit@2.3.19 src/common/encoding.ts, including the escape of user arrays that look like
// tags.

#include "protocol/compat.hpp"

#include "protocol/decode_error.hpp"

namespace rivetkit::protocol {

namespace {

constexpr std::string_view kBigIntTag = "$BigInt";
constexpr std::string_view kArrayBufferTag = "$ArrayBuffer";
constexpr std::string_view kUint8ArrayTag = "$Uint8Array";
constexpr std::string_view kUndefinedTag = "$Undefined";
constexpr std::string_view kSetTag = "$Set";

Value tagged(std::string_view tag, Value payload) {
  Array a;
  a.reserve(2);
  a.emplace_back(tag);
  a.push_back(std::move(payload));
  return Value(std::move(a));
}

// The shape the client treats as a tag: two elements, the first a string starting with '$'.
bool looks_tagged(const Array& a) {
  return a.size() == 2 && a[0].is_string() && !a[0].as_string().empty()
         && a[0].as_string()[0] == '$';
}

}  // namespace

Value compat_encode(const Value& v, CompatMode mode) {
  switch (v.kind()) {
    case Value::Kind::kBigInt:
      return tagged(kBigIntTag, Value(v.as_bigint().decimal()));
    case Value::Kind::kBytes:
      return tagged(kUint8ArrayTag, Value(base64_encode(v.as_bytes())));
    case Value::Kind::kUndefined:
      // JSON mode leaves undefined to JSON.stringify's rules (dropped / null).
      return mode == CompatMode::kCbor ? tagged(kUndefinedTag, Value(0)) : v;
    case Value::Kind::kArray: {
      Array out;
      out.reserve(v.as_array().size());
      for (const auto& item : v.as_array()) {
        out.push_back(compat_encode(item, mode));
      }
      if (looks_tagged(out)) {
        out[0].as_string().insert(0, 1, '$');
      }
      return Value(std::move(out));
    }
    case Value::Kind::kObject: {
      Object out;
      out.reserve(v.as_object().size());
      for (const auto& m : v.as_object()) {
        out.push_back(Member{m.key, compat_encode(m.value, mode)});
      }
      return Value(std::move(out));
    }
    default:
      return v;
  }
}

Result<Value> compat_decode(const Value& v) {
  if (v.is_object()) {
    Object out;
    out.reserve(v.as_object().size());
    for (const auto& m : v.as_object()) {
      auto revived = compat_decode(m.value);
      if (!revived) {
        return revived;
      }
      out.push_back(Member{m.key, std::move(*revived)});
    }
    return Value(std::move(out));
  }
  if (!v.is_array()) {
    return v;
  }
  const Array& a = v.as_array();
  if (!looks_tagged(a)) {
    Array out;
    out.reserve(a.size());
    for (const auto& item : a) {
      auto revived = compat_decode(item);
      if (!revived) {
        return revived;
      }
      out.push_back(std::move(*revived));
    }
    return Value(std::move(out));
  }

  const std::string& tag = a[0].as_string();
  const Value& payload = a[1];
  if (tag == kBigIntTag) {
    // BigInt(x) in JS accepts a decimal string or an integral number.
    if (payload.is_int()) {
      return Value(BigInt::from_int64(payload.as_int()));
    }
    if (payload.is_string()) {
      if (auto b = BigInt::parse(payload.as_string())) {
        return Value(std::move(*b));
      }
    }
    return fail_decode("invalid $BigInt payload");
  }
  if (tag == kUint8ArrayTag || tag == kArrayBufferTag) {
    if (payload.is_string()) {
      if (auto bytes = base64_decode(payload.as_string())) {
        return Value(std::move(*bytes));
      }
    }
    return fail_decode("invalid " + tag + " payload: expected a base64 string");
  }
  if (tag == kUndefinedTag) {
    return Value(Undefined{});
  }
  if (tag == kSetTag) {
    if (!payload.is_array()) {
      return fail_decode("invalid $Set payload: expected an array");
    }
    // Value has no Set kind; a set arrives as the array of its items, each revived on its own.
    Array items;
    items.reserve(payload.as_array().size());
    for (const auto& item : payload.as_array()) {
      auto revived = compat_decode(item);
      if (!revived) {
        return revived;
      }
      items.push_back(std::move(*revived));
    }
    return Value(std::move(items));
  }
  if (tag.size() >= 2 && tag[1] == '$') {
    auto revived = compat_decode(payload);
    if (!revived) {
      return revived;
    }
    Array out;
    out.reserve(2);
    out.emplace_back(std::string_view(tag).substr(1));
    out.push_back(std::move(*revived));
    return Value(std::move(out));
  }
  return fail_decode("unknown compat tag `" + tag + "`");
}

}  // namespace rivetkit::protocol
