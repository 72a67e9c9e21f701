#include "engine/gateway_caller.hpp"

#include "net/http_client.hpp"
#include "net/ws_client.hpp"
#include "protocol/cbor/cbor.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"
#include "util/url.hpp"

namespace rivetkit::engine {

namespace client = protocol::client;

namespace {

constexpr auto kEncoding = client::Encoding::kCbor;
constexpr std::size_t kMaxQueryInput = 4096;

std::string query_input(const Value& input) {
  return protocol::cbor_encode(protocol::compat_encode(input, protocol::CompatMode::kCbor));
}

}  // namespace

GatewayCaller::GatewayCaller(boost::asio::any_io_executor ex,
                             EngineApiOptions options,
                             std::chrono::milliseconds action_timeout)
    : ex_(std::move(ex)), options_(std::move(options)), action_timeout_(action_timeout) {
  while (!options_.endpoint.empty() && options_.endpoint.back() == '/') {
    options_.endpoint.pop_back();
  }
}

Task<Result<Value>> GatewayCaller::call(std::string actor_id, core::ClientWork work, Value params) {
  auto op = post(options_.endpoint + "/gateway/" + util::percent_encode(actor_id), "",
                 std::move(work), std::move(params));
  co_return co_await std::move(op);
}

Task<Result<std::shared_ptr<net::WebSocket>>> GatewayCaller::open_socket(
    std::string actor_id, std::string path, std::vector<std::string> protocols) {
  net::WsConnectOptions options;
  std::string base = options_.endpoint;
  if (base.rfind("https://", 0) == 0) {
    base = "wss://" + base.substr(8);
  } else if (base.rfind("http://", 0) == 0) {
    base = "ws://" + base.substr(7);
  }
  options.url = base + "/gateway/" + util::percent_encode(actor_id) + path;
  options.subprotocols = std::move(protocols);
  if (options_.token && !options_.token->empty()) {
    options.subprotocols.push_back("rivet_token." + *options_.token);
  }
  auto op = net::connect_websocket(ex_, std::move(options));
  co_return co_await std::move(op);
}

bool GatewayCaller::routes_query(const detail::ActorQuery& query) const {
  using Kind = detail::ActorQuery::Kind;
  if (query.kind != Kind::kGet && query.kind != Kind::kGetOrCreate) {
    return false;
  }
  for (const auto& part : query.key) {
    if (part.find(',') != std::string::npos) {
      return false;
    }
  }
  return query.kind == Kind::kGet || query.input.is_undefined()
         || query_input(query.input).size() <= kMaxQueryInput;
}

Task<Result<Value>> GatewayCaller::call_query(detail::ActorQuery query,
                                              core::ClientWork work,
                                              Value params) {
  const bool create = query.kind == detail::ActorQuery::Kind::kGetOrCreate;
  std::string search = "?rvt-namespace=" + util::percent_encode(options_.namespace_name)
                       + "&rvt-method=" + (create ? "getOrCreate" : "get");
  if (create) {
    search += "&rvt-runner=" + util::percent_encode(options_.pool);
  }
  if (!query.key.empty()) {
    std::string key;
    for (std::size_t i = 0; i < query.key.size(); ++i) {
      key += (i == 0 ? "" : ",") + query.key[i];
    }
    search += "&rvt-key=" + util::percent_encode(key);
  }
  if (create && !query.input.is_undefined()) {
    const std::string input = query_input(query.input);
    search += "&rvt-input="
              + protocol::base64url_encode(
                  std::span(reinterpret_cast<const std::uint8_t*>(input.data()), input.size()));
  }
  if (create) {
    search += "&rvt-crash-policy=sleep";
  }
  auto op = post(options_.endpoint + "/gateway/" + util::percent_encode(query.name),
                 std::move(search), std::move(work), std::move(params));
  co_return co_await std::move(op);
}

Task<Result<Value>> GatewayCaller::post(std::string base,
                                        std::string query,
                                        core::ClientWork work,
                                        Value params) {
  const auto* action = std::get_if<core::ActionWork>(&work);
  const auto* send = std::get_if<core::QueueWork>(&work);
  net::HttpClientRequest req;
  req.method = "POST";
  req.url = std::move(base)
            + (action != nullptr ? "/action/" + util::percent_encode(action->name)
                                 : "/queue/" + util::percent_encode(send->name))
            + query;
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
  if (action != nullptr) {
    req.body = client::encode_http_action_request(kEncoding, action->args);
  } else {
    req.body = client::encode_http_queue_send_request(
        kEncoding, client::QueueSendRequest{send->body, send->name, send->wait, send->timeout_ms});
  }
  req.timeout = action_timeout_;
  auto op = net::http_request(ex_, std::move(req));
  auto resp = co_await std::move(op);
  if (!resp) {
    co_return fail(resp.error());
  }
  if (resp->status == 200 && action != nullptr) {
    auto output = client::decode_http_action_response(kEncoding, resp->body);
    if (!output) {
      co_return fail(Error{"engine", "gateway_failed",
                           "Undecodable action response: " + output.error().message, std::nullopt,
                           false});
    }
    co_return std::move(*output);
  }
  if (resp->status == 200) {
    auto sent = client::decode_http_queue_send_response(kEncoding, resp->body);
    if (!sent) {
      co_return fail(Error{"engine", "gateway_failed",
                           "Undecodable queue send response: " + sent.error().message, std::nullopt,
                           false});
    }
    co_return core::queue_reply(sent->status == "timedOut", sent->response);
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
