// Runner-config setup against the engine's HTTP API (envoy-protocol.md §1.1).

#include "engine/engine_api.hpp"

#include "net/http_client.hpp"
#include "protocol/json/json.hpp"
#include "util/log.hpp"
#include "util/url.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <utility>

namespace rivetkit::engine {

namespace {

namespace asio = boost::asio;

/// How much of a response body goes into an error message.
constexpr std::size_t kMaxBodyInMessage = 300;

Error engine_error(std::string code, std::string message) {
  return Error{"engine", std::move(code), std::move(message), std::nullopt, false};
}

std::string base_url(std::string endpoint) {
  while (!endpoint.empty() && endpoint.back() == '/') {
    endpoint.pop_back();
  }
  return endpoint;
}

std::string token_of(const EngineApiOptions& opts) {
  return opts.token && !opts.token->empty() ? *opts.token : std::string("dev");
}

net::HttpClientRequest api_request(const EngineApiOptions& opts,
                                   std::string method,
                                   std::string path_and_query) {
  net::HttpClientRequest req;
  req.method = std::move(method);
  req.url = base_url(opts.endpoint) + path_and_query;
  req.headers.push_back(net::Header{"authorization", "Bearer " + token_of(opts)});
  req.headers.push_back(net::Header{"accept", "application/json"});
  req.timeout = opts.request_timeout;
  return req;
}

/// Outcome of one API call.
struct CallOutcome {
  enum class Kind { kOk, kRetry, kFatal };
  Kind kind = Kind::kOk;
  std::string detail;  // why it was not ok
  net::HttpResponse response;
};

bool body_says_not_found(const std::string& body) {
  auto parsed = protocol::json_parse(body);
  if (!parsed || !parsed->is_object()) {
    return false;
  }
  const Value* code = parsed->find("code");
  return code != nullptr && code->is_string() && code->as_string() == "not_found";
}

CallOutcome classify(const std::string& what, Result<net::HttpResponse> res) {
  CallOutcome out;
  if (!res) {
    out.kind = CallOutcome::Kind::kRetry;
    out.detail = what + ": " + res.error().message;
    return out;
  }
  const unsigned status = res->status;
  const bool ok = status >= 200 && status < 300;
  const bool retry_status = status == 404 || status == 429 || status >= 500;
  const bool not_found = body_says_not_found(res->body);
  if (ok && !not_found) {
    out.response = std::move(*res);
    return out;
  }
  out.kind = (retry_status || not_found) ? CallOutcome::Kind::kRetry : CallOutcome::Kind::kFatal;
  out.detail =
      what + " answered " + std::to_string(status) + ": " + res->body.substr(0, kMaxBodyInMessage);
  return out;
}

Result<std::vector<std::string>> parse_datacenters(const std::string& body) {
  auto parsed = protocol::json_parse(body);
  if (!parsed) {
    return fail(engine_error(
        "api_failed", "GET /datacenters: invalid JSON: " + body.substr(0, kMaxBodyInMessage)));
  }
  const Value* list = parsed->find("datacenters");
  if (list == nullptr || !list->is_array()) {
    return fail(engine_error("api_failed", "GET /datacenters: no datacenters array: "
                                               + body.substr(0, kMaxBodyInMessage)));
  }
  std::vector<std::string> names;
  for (const auto& dc : list->as_array()) {
    const Value* name = dc.find("name");
    if (name != nullptr && name->is_string() && !name->as_string().empty()) {
      names.push_back(name->as_string());
    }
  }
  return names;
}

std::string runner_config_body(const std::vector<std::string>& datacenters) {
  Value dcs = Value(Object{});
  for (const auto& name : datacenters) {
    dcs.set(name, Value::object({{"normal", Value(Object{})}, {"drain_on_version_upgrade", true}}));
  }
  return protocol::json_stringify(Value::object({{"datacenters", std::move(dcs)}}));
}

/// One attempt: list the datacenters, then PUT the pool. kOk, kRetry or kFatal.
Task<CallOutcome> attempt(asio::any_io_executor ex, EngineApiOptions opts) {
  const std::string ns = util::percent_encode(opts.namespace_name);
  auto get_op = net::http_request(ex, api_request(opts, "GET", "/datacenters?namespace=" + ns));
  auto get_res = co_await std::move(get_op);
  CallOutcome got = classify("GET /datacenters", std::move(get_res));
  if (got.kind != CallOutcome::Kind::kOk) {
    co_return got;
  }
  auto names = parse_datacenters(got.response.body);
  if (!names || names->empty()) {
    CallOutcome out;
    out.kind = CallOutcome::Kind::kRetry;
    out.detail = names ? std::string("GET /datacenters: no datacenter yet") : names.error().message;
    co_return out;
  }

  auto put = api_request(opts, "PUT",
                         "/runner-configs/" + util::percent_encode(opts.pool) + "?namespace=" + ns);
  put.headers.push_back(net::Header{"content-type", "application/json"});
  put.body = runner_config_body(*names);
  auto put_op = net::http_request(ex, std::move(put));
  auto put_res = co_await std::move(put_op);
  co_return classify("PUT /runner-configs/" + opts.pool, std::move(put_res));
}

}  // namespace

Task<Result<std::vector<std::string>>> list_datacenters(asio::any_io_executor ex,
                                                        EngineApiOptions opts) {
  const std::string ns = util::percent_encode(opts.namespace_name);
  auto op = net::http_request(ex, api_request(opts, "GET", "/datacenters?namespace=" + ns));
  auto res = co_await std::move(op);
  if (!res) {
    co_return fail(res.error());
  }
  if (res->status < 200 || res->status >= 300) {
    co_return fail(engine_error("api_failed", "GET /datacenters answered "
                                                  + std::to_string(res->status) + ": "
                                                  + res->body.substr(0, kMaxBodyInMessage)));
  }
  co_return parse_datacenters(res->body);
}

Task<Result<void>> ensure_runner_config(asio::any_io_executor ex, EngineApiOptions opts) {
  const int attempts = opts.max_attempts < 1 ? 1 : opts.max_attempts;
  std::string last;
  for (int i = 1; i <= attempts; ++i) {
    auto op = attempt(ex, opts);
    CallOutcome out = co_await std::move(op);
    if (out.kind == CallOutcome::Kind::kOk) {
      log::debug("engine: runner config namespace={} pool={} ready (attempt {})",
                 opts.namespace_name, opts.pool, i);
      co_return Result<void>{};
    }
    last = std::move(out.detail);
    if (out.kind == CallOutcome::Kind::kFatal) {
      break;
    }
    log::debug("engine: runner config attempt {}/{} failed: {}", i, attempts, last);
    if (i < attempts) {
      asio::steady_timer timer(ex, opts.retry_delay);
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
    }
  }
  co_return fail(engine_error("runner_config_failed", "cannot create the runner config for pool '"
                                                          + opts.pool + "' in namespace '"
                                                          + opts.namespace_name + "' at "
                                                          + base_url(opts.endpoint) + ": " + last));
}

}  // namespace rivetkit::engine
