#pragma once
// The RivetKit client protocol (client-protocol.md §6.3–§6.8, §7): the messages the official
// clients exchange with an actor, in the three encodings.
//
// Values inside messages are plain Values here: decoders apply compat revival (so the handler
// sees BigInt/Bytes, never ["$BigInt",...]); encoders apply compat tagging. JSON bodies are
// compat JSON; CBOR bodies carry raw CBOR user values on the way in and compat-tagged values on
// the way out; BARE carries compat-CBOR `data` fields after a u16 LE version prefix. BARE decoders
// accept versions 1..4 and encoders always write version 4.

#include "protocol/limits.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace rivetkit::protocol::client {

enum class Encoding { kJson, kCbor, kBare };

/// "json" | "cbor" | "bare" -> Encoding; anything else -> nullopt.
std::optional<Encoding> parse_encoding(std::string_view name);
std::string_view encoding_name(Encoding e);
/// HTTP rule (client-protocol.md §6.2): x-rivet-encoding "cbor" / "bare", anything else json.
Encoding http_encoding_from_header(std::string_view header_value);
/// "application/json" for json, "application/octet-stream" otherwise.
std::string_view content_type(Encoding e);
/// Whether WebSocket frames for this encoding are text (json) or binary.
bool is_text(Encoding e);

inline constexpr std::uint16_t kCurrentVersion = 4;

// ---- WebSocket /connect ---------------------------------------------------------------------

struct ActionRequest {
  std::uint64_t id = 0;
  std::string name;
  Array args;
};
struct SubscriptionRequest {
  std::string event_name;
  bool subscribe = false;
};
using ToServer = std::variant<ActionRequest, SubscriptionRequest>;

struct ActorSpecifier {
  std::string actor_id;
  std::uint64_t generation = 0;
  std::optional<std::string> key;
};
struct Init {
  std::string actor_id;
  std::string connection_id;
};
struct ErrorMessage {
  std::string group;
  std::string code;
  std::string message;
  std::optional<Value> metadata;
  std::optional<std::uint64_t> action_id;  // nullopt: connection-level error
  std::optional<ActorSpecifier> actor;
};
struct ActionResponse {
  std::uint64_t id = 0;
  Value output;
};
struct Event {
  std::string name;
  Array args;
};
using ToClient = std::variant<Init, ErrorMessage, ActionResponse, Event>;

/// Decodes one client frame. The frame type (text/binary) is not consulted (the server decides by
/// encoding, as rivetkit does). JSON/CBOR ids may be plain numbers or bigints.
Result<ToServer> decode_to_server(Encoding e,
                                  std::string_view frame,
                                  const DecodeLimits& limits = {});
/// Encodes one server frame: JSON text, or CBOR/BARE bytes. JSON ids/actionIds are
/// ["$BigInt","n"]; CBOR ids/actionIds/generation use the 8-byte integer head.
std::string encode_to_client(Encoding e, const ToClient& msg);

/// The client's side, for connections one actor opens to another (core/client/): one client
/// frame as the TS client writes it, and one server frame read back.
std::string encode_to_server(Encoding e, const ToServer& msg);
Result<ToClient> decode_to_client(Encoding e,
                                  std::string_view frame,
                                  const DecodeLimits& limits = {});

// ---- HTTP /action/{name} ---------------------------------------------------------------------

/// Decodes an HTTP action body into the argument list: JSON/CBOR {"args": x} where an array is the
/// list, null/absent means no arguments and anything else one argument; BARE HttpActionRequest.
Result<Array> decode_http_action_request(Encoding e,
                                         std::string_view body,
                                         const DecodeLimits& limits = {});
/// {"output": v} / HttpActionResponse.
std::string encode_http_action_response(Encoding e, const Value& output);
/// The client's side (actor-to-actor calls through the engine gateway), JSON or CBOR only:
/// {"args": [...]} as the TS client sends it, and the `output` of a 200 answer.
std::string encode_http_action_request(Encoding e, const Array& args);
Result<Value> decode_http_action_response(Encoding e,
                                          std::string_view body,
                                          const DecodeLimits& limits = {});

// ---- HTTP /queue/{name} ----------------------------------------------------------------------

struct QueueSendRequest {
  Value body;
  std::optional<std::string> name;
  bool wait = false;
  std::optional<std::uint64_t> timeout_ms;
};
Result<QueueSendRequest> decode_http_queue_send(Encoding e,
                                                std::string_view body,
                                                const DecodeLimits& limits = {});
/// status: "completed" | "timedOut".
std::string encode_http_queue_send_response(Encoding e,
                                            std::string_view status,
                                            const std::optional<Value>& response);
/// The client's side (actor-to-actor sends through the engine gateway): the request as the TS
/// client writes it ({body, name, wait, timeout?}; BARE with the body in compat CBOR), and the
/// answer.
std::string encode_http_queue_send_request(Encoding e, const QueueSendRequest& request);
struct QueueSendResponse {
  std::string status;
  std::optional<Value> response;
};
Result<QueueSendResponse> decode_http_queue_send_response(Encoding e,
                                                          std::string_view body,
                                                          const DecodeLimits& limits = {});

// ---- HTTP error body -------------------------------------------------------------------------

/// {"group","code","message","metadata"?,"actor"?} in JSON/CBOR (generation as a plain int), or
/// BARE HttpResponseError. action_id is ignored.
std::string encode_http_error(Encoding e, const ErrorMessage& err);
/// The client's side, JSON or CBOR only: group, code, message and metadata of an error body.
Result<ErrorMessage> decode_http_error(Encoding e,
                                       std::string_view body,
                                       const DecodeLimits& limits = {});

}  // namespace rivetkit::protocol::client
