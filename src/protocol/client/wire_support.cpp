#include "protocol/client/wire_support.hpp"

#include "protocol/cbor/cbor.hpp"
#include "protocol/compat.hpp"
#include "protocol/decode_error.hpp"
#include "protocol/json/json.hpp"

namespace rivetkit::protocol::client::detail {

Result<Value> parse_document(Encoding e, std::string_view bytes, const DecodeLimits& limits) {
  if (e == Encoding::kJson) {
    return json_parse(bytes, limits);
  }
  return cbor_decode(bytes, limits);
}

Result<Value> parse_object(Encoding e,
                           std::string_view bytes,
                           const DecodeLimits& limits,
                           std::string_view what) {
  auto root = parse_document(e, bytes, limits);
  if (!root) {
    return tl::unexpected(root.error());
  }
  if (!root->is_object()) {
    return fail_decode(std::string(what) + " must be an object, got "
                       + std::string(root->kind_name()));
  }
  return root;
}

std::string serialize_document(Encoding e, const Value& v) {
  return e == Encoding::kJson ? json_stringify(v) : cbor_encode(v);
}

Result<const Value*> expect_object(const Value* v, std::string_view what) {
  if (v == nullptr) {
    return fail_decode("missing " + std::string(what));
  }
  if (!v->is_object()) {
    return fail_decode(std::string(what) + " must be an object, got "
                       + std::string(v->kind_name()));
  }
  return v;
}

Result<std::string> required_string(const Value& obj, std::string_view key, std::string_view what) {
  const Value* member = obj.find(key);
  if (member == nullptr || !member->is_string()) {
    return fail_decode(std::string(what) + ": `" + std::string(key) + "` must be a string");
  }
  return member->as_string();
}

Result<bool> required_bool(const Value& obj, std::string_view key, std::string_view what) {
  const Value* member = obj.find(key);
  if (member == nullptr || !member->is_bool()) {
    return fail_decode(std::string(what) + ": `" + std::string(key) + "` must be a boolean");
  }
  return member->as_bool();
}

bool is_absent(const Value* member) {
  return member == nullptr || member->is_null() || member->is_undefined();
}

Result<std::uint64_t> read_uint(const Value& v, std::string_view what) {
  if (v.is_int() && v.as_int() >= 0) {
    return static_cast<std::uint64_t>(v.as_int());
  }
  if (v.is_bigint()) {
    if (auto u = v.as_bigint().to_uint64()) {
      return *u;
    }
  }
  if (v.is_array() && v.as_array().size() == 2 && v.as_array()[0] == Value("$BigInt")
      && v.as_array()[1].is_string()) {
    if (auto b = BigInt::parse(v.as_array()[1].as_string())) {
      if (auto u = b->to_uint64()) {
        return *u;
      }
    }
  }
  return fail_decode(std::string(what) + " must be an unsigned 64-bit integer");
}

Value json_bigint(std::uint64_t v) {
  return Value(Array{Value("$BigInt"), Value(std::to_string(v))});
}

Value cbor_bigint(std::uint64_t v) {
  return Value(BigInt::from_uint64(v));
}

Value envelope(std::string_view tag, Value val) {
  return Value::object({{"body", Value::object({{"tag", tag}, {"val", std::move(val)}})}});
}

Value user_value_out(Encoding e, const Value& v) {
  return compat_encode(v, e == Encoding::kJson ? CompatMode::kJson : CompatMode::kCbor);
}

Value required_user_value_out(Encoding e, const Value& v) {
  if (e == Encoding::kJson && v.is_undefined()) {
    return Value(nullptr);
  }
  return user_value_out(e, v);
}

Array normalize_args(Value args) {
  if (args.is_array()) {
    return std::move(args.as_array());
  }
  if (args.is_null() || args.is_undefined()) {
    return {};
  }
  Array one;
  one.push_back(std::move(args));
  return one;
}

Result<std::uint16_t> read_version(bare::Reader& r, std::string_view what) {
  std::uint16_t version = 0;
  if (!r.u16(version)) {
    return fail_decode(std::string(what) + ": missing the BARE version prefix");
  }
  if (version < kOldestVersion || version > kCurrentVersion) {
    return fail_decode(std::string(what) + ": unsupported client protocol version "
                       + std::to_string(version));
  }
  return version;
}

void write_version(bare::Writer& w) {
  w.u16(kCurrentVersion);
}

tl::unexpected<Error> bare_field_error(std::string_view what, std::string_view field) {
  return fail_decode(std::string(what) + ": truncated or malformed BARE field `"
                     + std::string(field) + "`");
}

Result<void> expect_end(const bare::Reader& r, std::string_view what) {
  if (!r.at_end()) {
    return fail_decode(std::string(what) + ": " + std::to_string(r.remaining())
                       + " unexpected trailing bytes");
  }
  return {};
}

Result<Value> decode_compat_cbor(std::string_view bytes, const DecodeLimits& limits) {
  if (bytes.empty()) {
    // Constructed in place: moving a temporary Value here trips a false g++ 12
    // -Wmaybe-uninitialized under -O1 -fsanitize.
    return Result<Value>(tl::in_place, nullptr);
  }
  auto decoded = cbor_decode(bytes, limits);
  if (!decoded) {
    return decoded;
  }
  return compat_decode(*decoded);
}

std::string encode_compat_cbor(const Value& v) {
  return cbor_encode(compat_encode(v, CompatMode::kCbor));
}

}  // namespace rivetkit::protocol::client::detail
