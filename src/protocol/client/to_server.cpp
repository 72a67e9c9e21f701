// Decoding of the client's /connect frames (client-protocol.md §6.8): ActionRequest and
// SubscriptionRequest in JSON, CBOR and BARE v1..v4 (ToServer did not change across versions).

#include "protocol/client/messages.hpp"
#include "protocol/client/wire_support.hpp"
#include "protocol/compat.hpp"
#include "protocol/decode_error.hpp"

namespace rivetkit::protocol::client {

namespace {

constexpr std::string_view kActionRequest = "ActionRequest";
constexpr std::string_view kSubscriptionRequest = "SubscriptionRequest";

// BARE union tags of ToServerBody.
constexpr std::uint64_t kActionRequestTag = 0;
constexpr std::uint64_t kSubscriptionRequestTag = 1;

Result<ToServer> decode_document(Encoding e, std::string_view frame, const DecodeLimits& limits) {
  auto root = detail::parse_document(e, frame, limits);
  if (!root) {
    return tl::unexpected(root.error());
  }
  auto body = detail::expect_object(root->find("body"), "ToServer.body");
  if (!body) {
    return tl::unexpected(body.error());
  }
  auto tag = detail::required_string(**body, "tag", "ToServer.body");
  if (!tag) {
    return tl::unexpected(tag.error());
  }
  auto val = detail::expect_object((*body)->find("val"), "ToServer.body.val");
  if (!val) {
    return tl::unexpected(val.error());
  }
  const Value& fields = **val;

  if (*tag == kActionRequest) {
    const Value* id_value = fields.find("id");
    if (id_value == nullptr) {
      return fail_decode("ActionRequest: missing `id`");
    }
    auto id = detail::read_uint(*id_value, "ActionRequest.id");
    if (!id) {
      return tl::unexpected(id.error());
    }
    auto name = detail::required_string(fields, "name", "ActionRequest");
    if (!name) {
      return tl::unexpected(name.error());
    }
    const Value* args_value = fields.find("args");
    if (args_value == nullptr) {
      return fail_decode("ActionRequest: missing `args`");
    }
    auto args = compat_decode(*args_value);
    if (!args) {
      return tl::unexpected(args.error());
    }
    return ActionRequest{*id, std::move(*name), detail::normalize_args(std::move(*args))};
  }
  if (*tag == kSubscriptionRequest) {
    auto event_name = detail::required_string(fields, "eventName", "SubscriptionRequest");
    if (!event_name) {
      return tl::unexpected(event_name.error());
    }
    auto subscribe = detail::required_bool(fields, "subscribe", "SubscriptionRequest");
    if (!subscribe) {
      return tl::unexpected(subscribe.error());
    }
    return SubscriptionRequest{std::move(*event_name), *subscribe};
  }
  return fail_decode("ToServer: unknown tag `" + *tag + "`");
}

Result<ToServer> decode_bare(std::string_view frame, const DecodeLimits& limits) {
  constexpr std::string_view kWhat = "ToServer";
  bare::Reader r(frame);
  if (auto version = detail::read_version(r, kWhat); !version) {
    return tl::unexpected(version.error());
  }
  std::uint64_t tag = 0;
  if (!r.uint(tag)) {
    return detail::bare_field_error(kWhat, "body tag");
  }
  ToServer out;
  if (tag == kActionRequestTag) {
    std::uint64_t id = 0;
    std::string name;
    std::string args_data;
    if (!r.uint(id)) {
      return detail::bare_field_error(kActionRequest, "id");
    }
    if (!r.str(name)) {
      return detail::bare_field_error(kActionRequest, "name");
    }
    if (!r.data(args_data)) {
      return detail::bare_field_error(kActionRequest, "args");
    }
    auto args = detail::decode_compat_cbor(args_data, limits);
    if (!args) {
      return tl::unexpected(args.error());
    }
    out = ActionRequest{id, std::move(name), detail::normalize_args(std::move(*args))};
  } else if (tag == kSubscriptionRequestTag) {
    SubscriptionRequest sub;
    if (!r.str(sub.event_name)) {
      return detail::bare_field_error(kSubscriptionRequest, "eventName");
    }
    if (!r.boolean(sub.subscribe)) {
      return detail::bare_field_error(kSubscriptionRequest, "subscribe");
    }
    out = std::move(sub);
  } else {
    return fail_decode("ToServer: unknown BARE union tag " + std::to_string(tag));
  }
  if (auto end = detail::expect_end(r, kWhat); !end) {
    return tl::unexpected(end.error());
  }
  return out;
}

}  // namespace

Result<ToServer> decode_to_server(Encoding e, std::string_view frame, const DecodeLimits& limits) {
  if (e == Encoding::kBare) {
    return decode_bare(frame, limits);
  }
  return decode_document(e, frame, limits);
}

}  // namespace rivetkit::protocol::client
