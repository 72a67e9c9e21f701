// POST /queue/{name}: a message for one of the actor's queues (client-protocol.md §6.4).

#include "core/errors.hpp"
#include "core/router/surfaces.hpp"
#include "util/log.hpp"

namespace rivetkit::core::router {

namespace client = protocol::client;

Task<net::HttpResponse> queue_send(ActorTarget target,
                                   net::HttpRequest req,
                                   std::string raw_name,
                                   client::Encoding encoding) {
  const auto* resolved = target.instance.get();
  const auto& config = target.runtime->config();
  if (req.method != "POST") {
    co_return ActorRouter::error_response(method_not_allowed(), encoding, resolved);
  }
  // The queue is named by the path (the body's `name` is informational, as in RivetKit).
  auto name = route_name(raw_name);
  if (!name || name->empty()) {
    co_return ActorRouter::error_response(route_not_found(req.target), encoding, resolved);
  }
  if (req.body.size() > config.max_incoming_message_size) {
    co_return ActorRouter::error_response(incoming_too_long(), encoding, resolved);
  }
  auto decoded = client::decode_http_queue_send(encoding, req.body);
  if (!decoded) {
    // As for an action: 400 with the generic internal error; the reason goes to the log.
    log::info("undecodable queue send body actor_id={} encoding={}: {}", target.actor_id(),
              client::encoding_name(encoding), decoded.error().message);
    auto resp = ActorRouter::error_response(internal_error(), encoding, resolved);
    resp.status = 400;
    co_return resp;
  }
  auto params = parse_params(req.header("x-rivet-conn-params"));
  if (!params) {
    co_return ActorRouter::error_response(params.error(), encoding, resolved);
  }
  QueueSendCommand command;
  command.params = std::move(*params);
  command.request = user_request_of(req);
  command.encoding = encoding;
  command.name = std::move(*name);
  command.body = std::move(decoded->body);
  command.wait = decoded->wait;
  command.timeout_ms = decoded->timeout_ms;
  auto op = dispatch_request(target, std::move(command));
  auto done = co_await std::move(op);
  const auto* instance = answered_by(target, done.instance);
  if (!done.result) {
    co_return ActorRouter::error_response(sanitize_for_client(done.result.error()), encoding,
                                          instance);
  }
  net::HttpResponse resp;
  resp.body = client::encode_http_queue_send_response(
      encoding, done.result->timed_out ? "timedOut" : "completed", done.result->response);
  if (resp.body.size() > config.max_outgoing_message_size) {
    co_return ActorRouter::error_response(outgoing_too_long(), encoding, instance);
  }
  resp.status = 200;
  resp.set_header("content-type", std::string(client::content_type(encoding)));
  add_actor_headers(resp, *instance);
  co_return resp;
}

}  // namespace rivetkit::core::router
