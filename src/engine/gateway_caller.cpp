#include "engine/gateway_caller.hpp"

#include "net/http_client.hpp"
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

Task<Result<Value>> GatewayCaller::call(std::string actor_id,
                                        std::string action,
                                        Array args,
                                        Value params) {
  std::string url = options_.endpoint + "/gateway/" + util::percent_encode(actor_id) + "/action/"
                    + util::percent_encode(action);
  auto op = post(std::move(url), std::move(args), std::move(params));
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
                                              std::string action,
                                              Array args,
                                              Value params) {
  const bool create = query.kind == detail::ActorQuery::Kind::kGetOrCreate;
  std::string url = options_.endpoint + "/gateway/" + util::percent_encode(query.name) + "/action/"
                    + util::percent_encode(action)
                    + "?rvt-namespace=" + util::percent_encode(options_.namespace_name)
                    + "&rvt-method=" + (create ? "getOrCreate" : "get");
  if (create) {
    url += "&rvt-runner=" + util::percent_encode(options_.pool);
  }
  if (!query.key.empty()) {
    std::string key;
    for (std::size_t i = 0; i < query.key.size(); ++i) {
      key += (i == 0 ? "" : ",") + query.key[i];
    }
    url += "&rvt-key=" + util::percent_encode(key);
  }
  if (create && !query.input.is_undefined()) {
    const std::string input = query_input(query.input);
    url += "&rvt-input="
           + protocol::base64url_encode(
               std::span(reinterpret_cast<const std::uint8_t*>(input.data()), input.size()));
  }
  if (create) {
    url += "&rvt-crash-policy=sleep";
  }
  auto op = post(std::move(url), std::move(args), std::move(params));
  co_return co_await std::move(op);
}

Task<Result<Value>> GatewayCaller::post(std::string url, Array args, Value params) {
  net::HttpClientRequest req;
  req.method = "POST";
  req.url = std::move(url);
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
