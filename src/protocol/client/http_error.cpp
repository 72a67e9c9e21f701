// HTTP error bodies from the actor router (client-protocol.md §6.5). JSON and CBOR use sorted
// keys with a plain-integer generation, as rivetkit-core writes them; BARE is HttpResponseError v4.

#include "protocol/bare/bare.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/client/wire_support.hpp"
#include "protocol/compat.hpp"
#include "protocol/decode_error.hpp"

namespace rivetkit::protocol::client {

std::string encode_http_error(Encoding e, const ErrorMessage& err) {
  if (e == Encoding::kBare) {
    std::string out;
    bare::Writer w(out);
    detail::write_version(w);
    w.str(err.group);
    w.str(err.code);
    w.str(err.message);
    w.optional_tag(err.metadata.has_value());
    if (err.metadata) {
      w.data(detail::encode_compat_cbor(*err.metadata));
    }
    w.optional_tag(err.actor.has_value());
    if (err.actor) {
      w.str(err.actor->actor_id);
      w.uint(err.actor->generation);
      w.optional_tag(err.actor->key.has_value());
      if (err.actor->key) {
        w.str(*err.actor->key);
      }
    }
    return out;
  }
  Value doc{Object{}};
  if (err.actor) {
    Value actor = Value::object(
        {{"actorId", err.actor->actor_id}, {"generation", Value(err.actor->generation)}});
    if (err.actor->key) {
      actor.set("key", *err.actor->key);
    }
    doc.set("actor", std::move(actor));
  }
  doc.set("code", err.code);
  doc.set("group", err.group);
  doc.set("message", err.message);
  if (err.metadata) {
    doc.set("metadata", detail::user_value_out(e, *err.metadata));
  }
  return detail::serialize_document(e, doc);
}

Result<ErrorMessage> decode_http_error(Encoding e,
                                       std::string_view body,
                                       const DecodeLimits& limits) {
  constexpr std::string_view kWhat = "HttpResponseError";
  auto root = detail::parse_object(e, body, limits, kWhat);
  if (!root) {
    return tl::unexpected(root.error());
  }
  ErrorMessage err;
  auto group = detail::required_string(*root, "group", kWhat);
  auto code = detail::required_string(*root, "code", kWhat);
  auto message = detail::required_string(*root, "message", kWhat);
  if (!group || !code || !message) {
    return tl::unexpected(!group ? group.error() : !code ? code.error() : message.error());
  }
  err.group = std::move(*group);
  err.code = std::move(*code);
  err.message = std::move(*message);
  if (const Value* metadata = root->find("metadata"); !detail::is_absent(metadata)) {
    auto revived = compat_decode(*metadata);
    if (!revived) {
      return tl::unexpected(revived.error());
    }
    err.metadata = std::move(*revived);
  }
  return err;
}

}  // namespace rivetkit::protocol::client
