// ANY /request[/...]: raw HTTP for the actor's on_request.

#include "core/errors.hpp"
#include "core/router/surfaces.hpp"

namespace rivetkit::core::router {

namespace client = protocol::client;

Task<net::HttpResponse> raw_http(ActorTarget target,
                                 net::HttpRequest req,
                                 std::string path,
                                 std::string search,
                                 client::Encoding encoding) {
  auto params = parse_params(req.header("x-rivet-conn-params"));
  if (!params) {
    co_return ActorRouter::error_response(params.error(), encoding, target.instance.get());
  }
  RawRequestCommand command;
  command.params = std::move(*params);
  command.request = to_user_request(req, std::move(path), std::move(search));
  auto op = dispatch_request(target, std::move(command));
  auto done = co_await std::move(op);
  const auto* instance = answered_by(target, done.instance);
  if (!done.result) {
    co_return ActorRouter::error_response(sanitize_for_client(done.result.error()), encoding,
                                          instance);
  }
  net::HttpResponse resp;
  resp.status = done.result->status;
  for (auto& h : done.result->headers) {
    resp.headers.push_back(net::Header{h.name, std::move(h.value)});
  }
  resp.body = std::move(done.result->body);
  add_actor_headers(resp, *instance);
  co_return resp;
}

}  // namespace rivetkit::core::router
