// HTTP action bodies (client-protocol.md §6.3): {"args": ...} / HttpActionRequest in, and
// {"output": ...} / HttpActionResponse out.

#include "protocol/bare/bare.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/client/wire_support.hpp"
#include "protocol/compat.hpp"
#include "protocol/decode_error.hpp"

namespace rivetkit::protocol::client {

namespace {

constexpr std::string_view kRequest = "HttpActionRequest";

Result<Array> decode_document(Encoding e, std::string_view body, const DecodeLimits& limits) {
  auto root = detail::parse_object(e, body, limits, kRequest);
  if (!root) {
    return tl::unexpected(root.error());
  }
  const Value* args = root->find("args");
  if (args == nullptr) {
    return Array{};
  }
  // Revive the whole value first: the TS client escapes an args array that itself looks like a
  // compat tag (e.g. args ["$x", 1] travel as ["$$x", 1]).
  auto revived = compat_decode(*args);
  if (!revived) {
    return tl::unexpected(revived.error());
  }
  return detail::normalize_args(std::move(*revived));
}

Result<Array> decode_bare(std::string_view body, const DecodeLimits& limits) {
  bare::Reader r(body);
  if (auto version = detail::read_version(r, kRequest); !version) {
    return tl::unexpected(version.error());
  }
  std::string args_data;
  if (!r.data(args_data)) {
    return detail::bare_field_error(kRequest, "args");
  }
  if (auto end = detail::expect_end(r, kRequest); !end) {
    return tl::unexpected(end.error());
  }
  auto args = detail::decode_compat_cbor(args_data, limits);
  if (!args) {
    return tl::unexpected(args.error());
  }
  return detail::normalize_args(std::move(*args));
}

}  // namespace

Result<Array> decode_http_action_request(Encoding e,
                                         std::string_view body,
                                         const DecodeLimits& limits) {
  if (e == Encoding::kBare) {
    return decode_bare(body, limits);
  }
  return decode_document(e, body, limits);
}

std::string encode_http_action_response(Encoding e, const Value& output) {
  if (e == Encoding::kBare) {
    std::string out;
    bare::Writer w(out);
    detail::write_version(w);
    w.data(detail::encode_compat_cbor(output));
    return out;
  }
  return detail::serialize_document(
      e, Value::object({{"output", detail::required_user_value_out(e, output)}}));
}

std::string encode_http_action_request(Encoding e, const Array& args) {
  return detail::serialize_document(
      e, Value::object({{"args", detail::user_value_out(e, Value(args))}}));
}

Result<Value> decode_http_action_response(Encoding e,
                                          std::string_view body,
                                          const DecodeLimits& limits) {
  auto root = detail::parse_object(e, body, limits, "HttpActionResponse");
  if (!root) {
    return tl::unexpected(root.error());
  }
  const Value* output = root->find("output");
  if (output == nullptr) {
    return Value{Undefined{}};
  }
  return compat_decode(*output);
}

}  // namespace rivetkit::protocol::client
