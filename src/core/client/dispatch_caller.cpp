#include "core/client/dispatch_caller.hpp"

#include "core/errors.hpp"
#include "core/runtime.hpp"
#include "net/pipe_websocket.hpp"
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

Task<Result<Value>> DispatchCaller::call(std::string actor_id, ClientWork work, Value params) {
  if (auto* a = std::get_if<ActionWork>(&work)) {
    auto op = action(std::move(actor_id), std::move(*a), std::move(params));
    co_return co_await std::move(op);
  }
  auto op =
      queue_send(std::move(actor_id), std::get<QueueWork>(std::move(work)), std::move(params));
  co_return co_await std::move(op);
}

Task<Result<Value>> DispatchCaller::action(std::string actor_id, ActionWork work, Value params) {
  // The call is not encoded, but its limits are a client's: the arguments as the callee would
  // receive them (max_incoming_message_size), the result as it would send it back
  // (max_outgoing_message_size), measured in the CBOR engine mode sends.
  const auto& config = runtime_.config();
  Value arg_list(std::move(work.args));
  if (over_limit(arg_list, config.max_incoming_message_size, true)) {
    co_return fail(incoming_too_long());
  }
  HttpActionCommand command;
  command.params = std::move(params);
  // What the callee's connection hooks see as the request: the action's own route, as the
  // gateway would have given it.
  command.request.method = "POST";
  command.request.path = "/action/" + work.name;
  command.name = std::move(work.name);
  command.args = std::move(arg_list.as_array());
  auto op = runtime_.dispatch(std::move(actor_id), std::move(command));
  auto done = co_await std::move(op);
  if (done.result && over_limit(*done.result, config.max_outgoing_message_size, false)) {
    co_return fail(outgoing_too_long());
  }
  co_return std::move(done.result);
}

Task<Result<Value>> DispatchCaller::queue_send(std::string actor_id, QueueWork work, Value params) {
  // As for an action: the body's limit is the request's as engine mode would send it.
  const auto& config = runtime_.config();
  if (size_bound(work.body) > config.max_incoming_message_size) {
    protocol::client::QueueSendRequest request{work.body, work.name, work.wait, work.timeout_ms};
    if (protocol::client::encode_http_queue_send_request(protocol::client::Encoding::kCbor, request)
            .size()
        > config.max_incoming_message_size) {
      co_return fail(incoming_too_long());
    }
  }
  QueueSendCommand command;
  command.params = std::move(params);
  command.request.method = "POST";
  command.request.path = "/queue/" + work.name;
  command.name = std::move(work.name);
  command.body = std::move(work.body);
  command.wait = work.wait;
  command.timeout_ms = work.timeout_ms;
  auto op = runtime_.dispatch(std::move(actor_id), std::move(command));
  auto done = co_await std::move(op);
  if (!done.result) {
    co_return fail(done.result.error());
  }
  Value reply = queue_reply(done.result->timed_out, done.result->response);
  if (done.result->response
      && over_limit(*done.result->response, config.max_outgoing_message_size, false)) {
    co_return fail(outgoing_too_long());
  }
  co_return reply;
}

Task<Result<std::shared_ptr<net::WebSocket>>> DispatchCaller::open_socket(
    std::string actor_id, std::string path, std::vector<std::string> protocols) {
  // The request the router sees: a WebSocket upgrade of `path`, offering the protocols.
  net::HttpRequest request;
  request.method = "GET";
  request.target = std::move(path);
  std::string offered;
  for (const auto& p : protocols) {
    offered += (offered.empty() ? "" : ", ") + p;
  }
  request.headers.push_back(net::Header{"sec-websocket-protocol", std::move(offered)});
  request.headers.push_back(net::Header{"upgrade", "websocket"});
  auto [client_end, server_end] = net::make_websocket_pipe(runtime_.executor());
  auto serve_op = serve_socket_(std::move(actor_id), std::move(request), server_end);
  auto served = co_await std::move(serve_op);
  if (!served) {
    server_end->close(1011, served.error().qualified_code());
    co_return fail(served.error());
  }
  co_return client_end;
}

}  // namespace rivetkit::core
