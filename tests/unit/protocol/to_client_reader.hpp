#pragma once
// Test-only decoder for server frames (the server never needs one). It lets the transcript tests
// turn a captured S->C frame into a ToClient, re-encode it with our encoder and compare bytes.

#include "protocol/bare/bare.hpp"
#include "protocol/cbor/cbor.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace rivetkit::protocol::test {

using client::ActionResponse;
using client::ActorSpecifier;
using client::Encoding;
using client::ErrorMessage;
using client::Event;
using client::Init;
using client::ToClient;

inline std::optional<std::uint64_t> uint_from(const Value& v) {
  if (v.is_int() && v.as_int() >= 0) {
    return static_cast<std::uint64_t>(v.as_int());
  }
  if (v.is_bigint()) {
    return v.as_bigint().to_uint64();
  }
  return std::nullopt;
}

inline std::optional<ToClient> read_to_client_document(const Value& root) {
  // The TS client revives the whole frame before validating it; do the same.
  auto revived = compat_decode(root);
  if (!revived) {
    return std::nullopt;
  }
  const Value* body = revived->find("body");
  if (body == nullptr || body->find("tag") == nullptr || body->find("val") == nullptr) {
    return std::nullopt;
  }
  const std::string& tag = body->find("tag")->as_string();
  const Value& val = *body->find("val");
  if (tag == "Init") {
    return Init{val.find("actorId")->as_string(), val.find("connectionId")->as_string()};
  }
  if (tag == "ActionResponse") {
    const Value* output = val.find("output");
    return ActionResponse{*uint_from(*val.find("id")), output ? *output : Value(Undefined{})};
  }
  if (tag == "Event") {
    return Event{val.find("name")->as_string(), val.find("args")->as_array()};
  }
  if (tag == "Error") {
    ErrorMessage e;
    e.group = val.find("group")->as_string();
    e.code = val.find("code")->as_string();
    e.message = val.find("message")->as_string();
    if (const Value* m = val.find("metadata")) {
      e.metadata = *m;
    }
    if (const Value* id = val.find("actionId"); id != nullptr && !id->is_null()) {
      e.action_id = *uint_from(*id);
    }
    if (const Value* a = val.find("actor")) {
      ActorSpecifier spec;
      spec.actor_id = a->find("actorId")->as_string();
      spec.generation = *uint_from(*a->find("generation"));
      if (const Value* k = a->find("key")) {
        spec.key = k->as_string();
      }
      e.actor = spec;
    }
    return e;
  }
  return std::nullopt;
}

inline std::optional<Value> read_compat_cbor(const std::string& data) {
  auto v = cbor_decode(data);
  if (!v) {
    return std::nullopt;
  }
  auto revived = compat_decode(*v);
  if (!revived) {
    return std::nullopt;
  }
  return *revived;
}

inline std::optional<ToClient> read_to_client_bare(std::string_view frame) {
  bare::Reader r(frame);
  std::uint16_t version = 0;
  std::uint8_t tag = 0;
  if (!r.u16(version) || version != 4 || !r.u8(tag)) {
    return std::nullopt;
  }
  std::optional<ToClient> out;
  if (tag == 0) {
    Init m;
    if (r.str(m.actor_id) && r.str(m.connection_id)) {
      out = m;
    }
  } else if (tag == 1) {
    ErrorMessage m;
    bool present = false;
    std::string data;
    if (!r.str(m.group) || !r.str(m.code) || !r.str(m.message) || !r.optional_tag(present)) {
      return std::nullopt;
    }
    if (present) {
      if (!r.data(data)) {
        return std::nullopt;
      }
      m.metadata = read_compat_cbor(data);
    }
    if (!r.optional_tag(present)) {
      return std::nullopt;
    }
    if (present) {
      std::uint64_t id = 0;
      if (!r.uint(id)) {
        return std::nullopt;
      }
      m.action_id = id;
    }
    if (!r.optional_tag(present)) {
      return std::nullopt;
    }
    if (present) {
      ActorSpecifier a;
      bool has_key = false;
      if (!r.str(a.actor_id) || !r.uint(a.generation) || !r.optional_tag(has_key)) {
        return std::nullopt;
      }
      if (has_key) {
        std::string key;
        if (!r.str(key)) {
          return std::nullopt;
        }
        a.key = key;
      }
      m.actor = a;
    }
    out = m;
  } else if (tag == 2) {
    ActionResponse m;
    std::string data;
    if (r.uint(m.id) && r.data(data)) {
      if (auto v = read_compat_cbor(data)) {
        m.output = *v;
        out = m;
      }
    }
  } else if (tag == 3) {
    Event m;
    std::string data;
    if (r.str(m.name) && r.data(data)) {
      if (auto v = read_compat_cbor(data); v && v->is_array()) {
        m.args = v->as_array();
        out = m;
      }
    }
  }
  if (!r.at_end()) {
    return std::nullopt;
  }
  return out;
}

inline std::optional<ToClient> read_to_client(Encoding e, std::string_view frame) {
  if (e == Encoding::kBare) {
    return read_to_client_bare(frame);
  }
  auto root = e == Encoding::kJson ? json_parse(frame) : cbor_decode(frame);
  if (!root) {
    return std::nullopt;
  }
  return read_to_client_document(*root);
}

}  // namespace rivetkit::protocol::test
