#pragma once
// The body of the three client-protocol targets (fuzz_client_json, _cbor, _bare): one input is
// tried as every message a client sends in that encoding (a /connect frame, an HTTP action body,
// an HTTP queue body). What decodes is sent back through the encoders the server answers with.
//
// Invariants: every encoder output is a well-formed document of its encoding, and the encoding
// of an echoed ActionResponse/Event is a fixpoint after one read back (the test-only ToClient
// reader of the unit tests).

#include "fuzz_support.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/client/wire_support.hpp"

#include <variant>

namespace rivetkit::fuzz {

inline void check_document(protocol::client::Encoding e, const std::string& bytes) {
  if (e == protocol::client::Encoding::kBare) {
    // Every BARE answer starts with the u16 LE version this server writes.
    FUZZ_CHECK(bytes.size() >= 2);
    FUZZ_CHECK(static_cast<std::uint8_t>(bytes[0]) == protocol::client::kCurrentVersion);
    FUZZ_CHECK(bytes[1] == 0);
    return;
  }
  FUZZ_CHECK(protocol::client::detail::parse_document(e, bytes, {}).has_value());
}

inline void check_to_client_fixpoint(protocol::client::Encoding e,
                                     const protocol::client::ToClient& msg) {
  const std::string first = protocol::client::encode_to_client(e, msg);
  auto read = protocol::client::decode_to_client(e, first);
  FUZZ_CHECK(read.has_value());
  FUZZ_CHECK(read->index() == msg.index());
  FUZZ_CHECK(protocol::client::encode_to_client(e, *read) == first);
}

inline int fuzz_client_messages(protocol::client::Encoding e, std::string_view input) {
  namespace client = protocol::client;
  if (auto frame = client::decode_to_server(e, input)) {
    if (const auto* action = std::get_if<client::ActionRequest>(&*frame)) {
      check_to_client_fixpoint(e, client::ActionResponse{action->id, Value(action->args)});
      check_to_client_fixpoint(e, client::Event{action->name, action->args});
      client::ErrorMessage err{"user",     action->name, action->name, Value(action->args),
                               action->id, std::nullopt};
      check_to_client_fixpoint(e, err);
      check_document(e, client::encode_http_error(e, err));
    } else {
      const auto& sub = std::get<client::SubscriptionRequest>(*frame);
      check_to_client_fixpoint(e, client::Event{sub.event_name, {}});
    }
  }
  if (auto args = client::decode_http_action_request(e, input)) {
    check_document(e, client::encode_http_action_response(e, Value(*args)));
  }
  if (auto queue = client::decode_http_queue_send(e, input)) {
    check_document(e, client::encode_http_queue_send_response(e, "completed", queue->body));
    check_document(e, client::encode_http_queue_send_response(e, "timedOut", std::nullopt));
  }
  return 0;
}

}  // namespace rivetkit::fuzz
