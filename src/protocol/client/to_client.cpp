// Encoding of the server's /connect frames (client-protocol.md §6.8).
//
// Member order follows what rivetkit-core writes, so our frames match the captured ones byte for
// byte where the values agree: JSON members are sorted by key (serde_json maps), CBOR members are
// in struct order. Ids are bigints in the form each client decoder requires, and user values are
// compat-tagged because the TS client revives every frame it decodes.

#include "protocol/bare/bare.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/client/wire_support.hpp"

namespace rivetkit::protocol::client {

namespace {

// BARE union tags of ToClientBody.
constexpr std::uint8_t kInitTag = 0;
constexpr std::uint8_t kErrorTag = 1;
constexpr std::uint8_t kActionResponseTag = 2;
constexpr std::uint8_t kEventTag = 3;

Value actor_specifier(Encoding e, const ActorSpecifier& actor) {
  Value out = Value::object({{"actorId", actor.actor_id}});
  // JSON may carry a plain number (zod accepts number | bigint); cbor-x needs the 8-byte head.
  out.set("generation",
          e == Encoding::kJson ? Value(actor.generation) : detail::cbor_bigint(actor.generation));
  if (actor.key) {
    out.set("key", *actor.key);  // omitted, not null, when absent: the schema says optional
  }
  return out;
}

Value id_value(Encoding e, std::uint64_t id) {
  return e == Encoding::kJson ? detail::json_bigint(id) : detail::cbor_bigint(id);
}

Value document_for(Encoding /*e*/, const Init& m) {
  return detail::envelope(
      "Init", Value::object({{"actorId", m.actor_id}, {"connectionId", m.connection_id}}));
}

Value document_for(Encoding e, const ErrorMessage& m) {
  // actionId is always present: null marks a connection-level error (the schema is nullable,
  // not optional).
  const Value action_id = m.action_id ? id_value(e, *m.action_id) : Value(nullptr);
  Value val{Object{}};
  if (e == Encoding::kJson) {
    val.set("actionId", action_id);
    if (m.actor) {
      val.set("actor", actor_specifier(e, *m.actor));
    }
    val.set("code", m.code);
    val.set("group", m.group);
    val.set("message", m.message);
    if (m.metadata) {
      val.set("metadata", detail::user_value_out(e, *m.metadata));
    }
  } else {
    val.set("group", m.group);
    val.set("code", m.code);
    val.set("message", m.message);
    if (m.metadata) {
      val.set("metadata", detail::user_value_out(e, *m.metadata));
    }
    if (m.actor) {
      val.set("actor", actor_specifier(e, *m.actor));
    }
    val.set("actionId", action_id);
  }
  return detail::envelope("Error", std::move(val));
}

Value document_for(Encoding e, const ActionResponse& m) {
  return detail::envelope(
      "ActionResponse", Value::object({{"id", id_value(e, m.id)},
                                       {"output", detail::required_user_value_out(e, m.output)}}));
}

Value document_for(Encoding e, const Event& m) {
  Value args = detail::user_value_out(e, Value(m.args));
  if (e == Encoding::kJson) {
    return detail::envelope("Event", Value::object({{"args", std::move(args)}, {"name", m.name}}));
  }
  return detail::envelope("Event", Value::object({{"name", m.name}, {"args", std::move(args)}}));
}

void write_actor_specifier(bare::Writer& w, const ActorSpecifier& actor) {
  w.str(actor.actor_id);
  w.uint(actor.generation);
  w.optional_tag(actor.key.has_value());
  if (actor.key) {
    w.str(*actor.key);
  }
}

void write_bare(bare::Writer& w, const Init& m) {
  w.u8(kInitTag);
  w.str(m.actor_id);
  w.str(m.connection_id);
}

void write_bare(bare::Writer& w, const ErrorMessage& m) {
  w.u8(kErrorTag);
  w.str(m.group);
  w.str(m.code);
  w.str(m.message);
  w.optional_tag(m.metadata.has_value());
  if (m.metadata) {
    w.data(detail::encode_compat_cbor(*m.metadata));
  }
  w.optional_tag(m.action_id.has_value());
  if (m.action_id) {
    w.uint(*m.action_id);
  }
  w.optional_tag(m.actor.has_value());
  if (m.actor) {
    write_actor_specifier(w, *m.actor);
  }
}

void write_bare(bare::Writer& w, const ActionResponse& m) {
  w.u8(kActionResponseTag);
  w.uint(m.id);
  w.data(detail::encode_compat_cbor(m.output));
}

void write_bare(bare::Writer& w, const Event& m) {
  w.u8(kEventTag);
  w.str(m.name);
  w.data(detail::encode_compat_cbor(Value(m.args)));
}

}  // namespace

std::string encode_to_client(Encoding e, const ToClient& msg) {
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

}  // namespace rivetkit::protocol::client
