#include "engine/gateway_caller.hpp"

#include "net/http_client.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"
#include "util/url.hpp"

namespace rivetkit::engine {

namespace client = protocol::client;

namespace {

constexpr auto kEncoding = client::Encoding::kCbor;

}  // namespace

GatewayCaller::GatewayCaller(boost::asio::any_io_executor ex,
                             EngineApiOptions options,
                             std::chrono::milliseconds action_timeout)
    : ex_(std::move(ex)), options_(std::move(options)), action_timeout_(action_timeout) {
  while (!options_.endpoint.empty() && options_.endpoint.back() == '/') {
    options_.endpoint.pop_back();
  }
}

Task<Result<Value>> GatewayCaller::call(std::string actor_id,
                                        std::string action,
                                        Array args,
                                        Value params) {
  net::HttpClientRequest req;
  req.method = "POST";
  req.url = options_.endpoint + "/gateway/" + util::percent_encode(actor_id) + "/action/"
            + util::percent_encode(action);
  req.headers.push_back(net::Header{"content-type", std::string(client::content_type(kEncoding))});
  req.headers.push_back(net::Header{"x-rivet-encoding", "cbor"});
  if (!params.is_null() && !params.is_undefined()) {
    req.headers.push_back(net::Header{
        "x-rivet-conn-params",
        protocol::json_stringify(protocol::compat_encode(params, protocol::CompatMode::kJson))});
  }
  if (options_.token && !options_.token->empty()) {
    req.headers.push_back(net::Header{"x-rivet-token", *options_.token});
  }
  req.body = client::encode_http_action_request(kEncoding, args);
  req.timeout = action_timeout_;
  auto op = net::http_request(ex_, std::move(req));
  auto resp = co_await std::move(op);
  if (!resp) {
    co_return fail(resp.error());
  }
  if (resp->status == 200) {
    auto output = client::decode_http_action_response(kEncoding, resp->body);
    if (!output) {
      co_return fail(Error{"engine", "gateway_failed",
                           "Undecodable action response: " + output.error().message, std::nullopt,
                           false});
    }
    co_return std::move(*output);
  }
  // The actor's own errors come in the call's encoding; the engine's guard answers in JSON.
  auto error = client::decode_http_error(kEncoding, resp->body);
  if (!error) {
    error = client::decode_http_error(client::Encoding::kJson, resp->body);
  }
  if (!error) {
    co_return fail(Error{
        "engine", "gateway_failed",
        "The gateway answered " + std::to_string(resp->status) + ": " + resp->body.substr(0, 200),
        std::nullopt, false});
  }
  co_return fail(Error{std::move(error->group), std::move(error->code), std::move(error->message),
                       std::move(error->metadata), true});
}

}  // namespace rivetkit::engine
