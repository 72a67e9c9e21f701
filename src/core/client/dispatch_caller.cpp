#include "core/client/dispatch_caller.hpp"

#include "core/errors.hpp"
#include "core/runtime.hpp"
#include "protocol/client/messages.hpp"

namespace rivetkit::core {

namespace {

// More than the bytes `v` takes in a CBOR action body (compat tags included: bytes travel as
// base64 strings, big integers as decimal strings), found without encoding anything.
std::size_t size_bound(const Value& v) {
  constexpr std::size_t kNode = 32;  // head, and a compat tag's array and name
  switch (v.kind()) {
    case Value::Kind::kString:
      return kNode + v.as_string().size();
    case Value::Kind::kBytes:
      return kNode + (v.as_bytes().size() + 2) / 3 * 4;
    case Value::Kind::kBigInt:
      return kNode + v.as_bigint().decimal().size();
    case Value::Kind::kArray: {
      std::size_t n = kNode;
      for (const auto& item : v.as_array()) {
        n += size_bound(item);
      }
      return n;
    }
    case Value::Kind::kObject: {
      std::size_t n = kNode;
      for (const auto& member : v.as_object()) {
        n += kNode + member.key.size() + size_bound(member.value);
      }
      return n;
    }
    default:
      return kNode;
  }
}

// Whether `v` is over `limit` bytes as the engine's gateway would carry it (CBOR). Encodes only
// when the bound says it may be.
bool over_limit(const Value& v, std::size_t limit, bool as_request) {
  if (size_bound(v) <= limit) {
    return false;
  }
  constexpr auto kCbor = protocol::client::Encoding::kCbor;
  const std::size_t size =
      as_request ? protocol::client::encode_http_action_request(kCbor, v.as_array()).size()
                 : protocol::client::encode_http_action_response(kCbor, v).size();
  return size > limit;
}

}  // namespace

Task<Result<Value>> DispatchCaller::call(std::string actor_id,
                                         std::string action,
                                         Array args,
                                         Value params) {
  // The call is not encoded, but its limits are a client's: the arguments as the callee would
  // receive them (max_incoming_message_size), the result as it would send it back
  // (max_outgoing_message_size), measured in the CBOR engine mode sends.
  const auto& config = runtime_.config();
  Value arg_list(std::move(args));
  if (over_limit(arg_list, config.max_incoming_message_size, true)) {
    co_return fail(incoming_too_long());
  }
  HttpActionCommand command;
  command.params = std::move(params);
  // What the callee's connection hooks see as the request: the action's own route, as the
  // gateway would have given it.
  command.request.method = "POST";
  command.request.path = "/action/" + action;
  command.name = std::move(action);
  command.args = std::move(arg_list.as_array());
  auto op = runtime_.dispatch(std::move(actor_id), std::move(command));
  auto done = co_await std::move(op);
  if (done.result && over_limit(*done.result, config.max_outgoing_message_size, false)) {
    co_return fail(outgoing_too_long());
  }
  co_return std::move(done.result);
}

}  // namespace rivetkit::core
