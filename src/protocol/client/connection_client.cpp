// The client's side of the /connect protocol (client-protocol.md §6.8), for connections one actor
// opens to another: ActionRequest and SubscriptionRequest written as the TS client writes them,
// and the server's Init, Error, ActionResponse and Event read in every encoding.

#include "protocol/bare/bare.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/client/wire_support.hpp"
#include "protocol/compat.hpp"
#include "protocol/decode_error.hpp"

namespace rivetkit::protocol::client {

namespace {

constexpr std::uint8_t kActionRequestTag = 0;
constexpr std::uint8_t kSubscriptionRequestTag = 1;
constexpr std::uint64_t kInitTag = 0;
constexpr std::uint64_t kErrorTag = 1;
constexpr std::uint64_t kActionResponseTag = 2;
constexpr std::uint64_t kEventTag = 3;

Value document_for(Encoding e, const ActionRequest& m) {
  const Value id = e == Encoding::kJson ? detail::json_bigint(m.id) : detail::cbor_bigint(m.id);
  return detail::envelope(
      "ActionRequest",
      Value::object(
          {{"id", id}, {"name", m.name}, {"args", detail::user_value_out(e, Value(m.args))}}));
}

Value document_for(Encoding /*e*/, const SubscriptionRequest& m) {
  return detail::envelope("SubscriptionRequest",
                          Value::object({{"eventName", m.event_name}, {"subscribe", m.subscribe}}));
}

void write_bare(bare::Writer& w, const ActionRequest& m) {
  w.u8(kActionRequestTag);
  w.uint(m.id);
  w.str(m.name);
  w.data(detail::encode_compat_cbor(Value(m.args)));
}

void write_bare(bare::Writer& w, const SubscriptionRequest& m) {
  w.u8(kSubscriptionRequestTag);
  w.str(m.event_name);
  w.boolean(m.subscribe);
}

// A user value of a JSON/CBOR frame, revived from its compat form.
Result<Value> revived(const Value* v) {
  if (v == nullptr) {
    return Value{Undefined{}};
  }
  return compat_decode(*v);
}

Result<ActorSpecifier> actor_from(const Value& v) {
  if (!v.is_object()) {
    return fail_decode("Error.actor must be an object");
  }
  ActorSpecifier actor;
  auto id = detail::required_string(v, "actorId", "Error.actor");
  if (!id) {
    return tl::unexpected(id.error());
  }
  actor.actor_id = std::move(*id);
  if (const Value* generation = v.find("generation"); !detail::is_absent(generation)) {
    auto g = detail::read_uint(*generation, "Error.actor.generation");
    if (!g) {
      return tl::unexpected(g.error());
    }
    actor.generation = *g;
  }
  if (const Value* key = v.find("key"); !detail::is_absent(key) && key->is_string()) {
    actor.key = key->as_string();
  }
  return actor;
}

Result<ToClient> decode_document(Encoding e, std::string_view frame, const DecodeLimits& limits) {
  auto root = detail::parse_document(e, frame, limits);
  if (!root) {
    return tl::unexpected(root.error());
  }
  auto body = detail::expect_object(root->find("body"), "ToClient.body");
  if (!body) {
    return tl::unexpected(body.error());
  }
  auto tag = detail::required_string(**body, "tag", "ToClient.body");
  if (!tag) {
    return tl::unexpected(tag.error());
  }
  auto val = detail::expect_object((*body)->find("val"), "ToClient.body.val");
  if (!val) {
    return tl::unexpected(val.error());
  }
  const Value& fields = **val;
  if (*tag == "Init") {
    auto actor_id = detail::required_string(fields, "actorId", "Init");
    auto conn_id = detail::required_string(fields, "connectionId", "Init");
    if (!actor_id || !conn_id) {
      return tl::unexpected(!actor_id ? actor_id.error() : conn_id.error());
    }
    return Init{std::move(*actor_id), std::move(*conn_id)};
  }
  if (*tag == "ActionResponse") {
    const Value* id_value = fields.find("id");
    if (id_value == nullptr) {
      return fail_decode("ActionResponse: missing `id`");
    }
    auto id = detail::read_uint(*id_value, "ActionResponse.id");
    if (!id) {
      return tl::unexpected(id.error());
    }
    auto output = revived(fields.find("output"));
    if (!output) {
      return tl::unexpected(output.error());
    }
    return ActionResponse{*id, std::move(*output)};
  }
  if (*tag == "Event") {
    auto name = detail::required_string(fields, "name", "Event");
    if (!name) {
      return tl::unexpected(name.error());
    }
    auto args = revived(fields.find("args"));
    if (!args) {
      return tl::unexpected(args.error());
    }
    return Event{std::move(*name), detail::normalize_args(std::move(*args))};
  }
  if (*tag == "Error") {
    ErrorMessage m;
    auto group = detail::required_string(fields, "group", "Error");
    auto code = detail::required_string(fields, "code", "Error");
    auto message = detail::required_string(fields, "message", "Error");
    if (!group || !code || !message) {
      return tl::unexpected(!group ? group.error() : !code ? code.error() : message.error());
    }
    m.group = std::move(*group);
    m.code = std::move(*code);
    m.message = std::move(*message);
    if (const Value* metadata = fields.find("metadata"); !detail::is_absent(metadata)) {
      auto meta = compat_decode(*metadata);
      if (!meta) {
        return tl::unexpected(meta.error());
      }
      m.metadata = std::move(*meta);
    }
    if (const Value* action_id = fields.find("actionId"); !detail::is_absent(action_id)) {
      auto id = detail::read_uint(*action_id, "Error.actionId");
      if (!id) {
        return tl::unexpected(id.error());
      }
      m.action_id = *id;
    }
    if (const Value* actor = fields.find("actor"); !detail::is_absent(actor)) {
      auto spec = actor_from(*actor);
      if (!spec) {
        return tl::unexpected(spec.error());
      }
      m.actor = std::move(*spec);
    }
    return m;
  }
  return fail_decode("ToClient: unknown tag `" + *tag + "`");
}

Result<ToClient> decode_bare(std::string_view frame, const DecodeLimits& limits) {
  constexpr std::string_view kWhat = "ToClient";
  bare::Reader r(frame);
  if (auto version = detail::read_version(r, kWhat); !version) {
    return tl::unexpected(version.error());
  }
  std::uint64_t tag = 0;
  if (!r.uint(tag)) {
    return detail::bare_field_error(kWhat, "body tag");
  }
  ToClient out;
  if (tag == kInitTag) {
    Init m;
    if (!r.str(m.actor_id) || !r.str(m.connection_id)) {
      return detail::bare_field_error("Init", "actorId/connectionId");
    }
    out = std::move(m);
  } else if (tag == kActionResponseTag) {
    ActionResponse m;
    std::string output;
    if (!r.uint(m.id) || !r.data(output)) {
      return detail::bare_field_error("ActionResponse", "id/output");
    }
    auto value = detail::decode_compat_cbor(output, limits);
    if (!value) {
      return tl::unexpected(value.error());
    }
    m.output = std::move(*value);
    out = std::move(m);
  } else if (tag == kEventTag) {
    Event m;
    std::string args;
    if (!r.str(m.name) || !r.data(args)) {
      return detail::bare_field_error("Event", "name/args");
    }
    auto value = detail::decode_compat_cbor(args, limits);
    if (!value) {
      return tl::unexpected(value.error());
    }
    m.args = detail::normalize_args(std::move(*value));
    out = std::move(m);
  } else if (tag == kErrorTag) {
    ErrorMessage m;
    if (!r.str(m.group) || !r.str(m.code) || !r.str(m.message)) {
      return detail::bare_field_error("Error", "group/code/message");
    }
    bool present = false;
    if (!r.optional_tag(present)) {
      return detail::bare_field_error("Error", "metadata");
    }
    if (present) {
      std::string data;
      if (!r.data(data)) {
        return detail::bare_field_error("Error", "metadata");
      }
      auto meta = detail::decode_compat_cbor(data, limits);
      if (!meta) {
        return tl::unexpected(meta.error());
      }
      m.metadata = std::move(*meta);
    }
    if (!r.optional_tag(present)) {
      return detail::bare_field_error("Error", "actionId");
    }
    if (present) {
      std::uint64_t id = 0;
      if (!r.uint(id)) {
        return detail::bare_field_error("Error", "actionId");
      }
      m.action_id = id;
    }
    if (!r.optional_tag(present)) {
      return detail::bare_field_error("Error", "actor");
    }
    if (present) {
      ActorSpecifier actor;
      bool has_key = false;
      if (!r.str(actor.actor_id) || !r.uint(actor.generation) || !r.optional_tag(has_key)) {
        return detail::bare_field_error("Error", "actor");
      }
      if (has_key) {
        std::string key;
        if (!r.str(key)) {
          return detail::bare_field_error("Error", "actor.key");
        }
        actor.key = std::move(key);
      }
      m.actor = std::move(actor);
    }
    out = std::move(m);
  } else {
    return fail_decode("ToClient: unknown BARE union tag " + std::to_string(tag));
  }
  if (auto end = detail::expect_end(r, kWhat); !end) {
    return tl::unexpected(end.error());
  }
  return out;
}

}  // namespace

std::string encode_to_server(Encoding e, const ToServer& msg) {
  if (e == Encoding::kBare) {
    std::string out;
    bare::Writer w(out);
    detail::write_version(w);
    std::visit([&](const auto& m) { write_bare(w, m); }, msg);
    return out;
  }
  const Value doc = std::visit([&](const auto& m) { return document_for(e, m); }, msg);
  return detail::serialize_document(e, doc);
}

Result<ToClient> decode_to_client(Encoding e, std::string_view frame, const DecodeLimits& limits) {
  if (e == Encoding::kBare) {
    return decode_bare(frame, limits);
  }
  return decode_document(e, frame, limits);
}

}  // namespace rivetkit::protocol::client
