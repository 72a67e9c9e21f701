#include "core/errors.hpp"
#include "core/router/surfaces.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"
#include "protocol/text/utf8.hpp"
#include "util/url.hpp"

namespace rivetkit::core::router {

namespace client = protocol::client;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

Request to_user_request(const net::HttpRequest& req, std::string path, std::string search) {
  Request out;
  out.method = req.method;
  out.path = std::move(path);
  out.search = std::move(search);
  out.headers.reserve(req.headers.size());
  for (const auto& h : req.headers) {
    out.headers.push_back(HttpHeader{h.name, h.value});
  }
  out.body = req.body;
  return out;
}

void add_actor_headers(net::HttpResponse& resp, const ActorInstance& instance) {
  resp.set_header("x-rivet-actor", instance.actor_id());
  resp.set_header("x-rivet-actor-generation", std::to_string(instance.generation()));
  const std::string& key = instance.key_string();
  if (key.find_first_of("\r\n") == std::string::npos) {
    resp.set_header("x-rivet-actor-key", key);
  }
}

std::optional<std::string> query_value(std::string_view search, std::string_view name) {
  if (!search.empty() && search.front() == '?') {
    search.remove_prefix(1);
  }
  for (const auto& pair : util::split_query(search)) {
    auto decoded_name = util::percent_decode(pair.raw_name, true);
    if (decoded_name && *decoded_name == name) {
      return util::percent_decode(pair.raw_value, true);
    }
  }
  return std::nullopt;
}

Result<Value> parse_params(std::optional<std::string_view> text) {
  if (!text || text->empty()) {
    return Value{};
  }
  auto parsed = protocol::json_parse(*text);
  if (!parsed) {
    return fail(Error{"actor", "invalid_params", "Connection params are not valid JSON",
                      std::nullopt, true});
  }
  return protocol::compat_decode(*parsed);
}

client::ErrorMessage to_error_message(const Error& e,
                                      std::optional<std::uint64_t> action_id,
                                      const ActorInstance* instance) {
  client::ErrorMessage msg;
  msg.group = e.group;
  msg.code = e.code;
  msg.message = e.message;
  msg.metadata = e.metadata;
  msg.action_id = action_id;
  if (instance != nullptr) {
    msg.actor = instance->specifier();
  }
  return msg;
}

const ActorInstance* answered_by(const ActorTarget& target,
                                 const std::shared_ptr<ActorInstance>& ran) {
  return ran ? ran.get() : target.instance.get();
}

std::optional<std::string> route_name(std::string_view raw_name) {
  // A name that is not UTF-8 cannot name anything (names are protocol strings); like a malformed
  // escape, it is no route.
  auto name = util::percent_decode(raw_name);
  if (!name || raw_name.find('/') != std::string_view::npos
      || !protocol::text::is_valid_utf8(*name)) {
    return std::nullopt;
  }
  return name;
}

Request user_request_of(const net::HttpRequest& req) {
  auto parts = util::split_target(req.target);
  return to_user_request(req, std::string(parts.path),
                         parts.has_query ? "?" + std::string(parts.query) : "");
}

}  // namespace rivetkit::core::router

namespace rivetkit::core {

namespace client = protocol::client;
using router::starts_with;

WsProtocols parse_ws_protocols(const net::HttpRequest& req) {
  WsProtocols out;
  auto header = req.header("sec-websocket-protocol");
  if (!header) {
    return out;
  }
  std::string_view rest = *header;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = net::trim_ows(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) {
      continue;
    }
    out.offered_any = true;
    if (item == "rivet") {
      out.offered_rivet = true;
    } else if (starts_with(item, "rivet_encoding.") && !out.encoding) {
      out.encoding = std::string(item.substr(15));
    } else if (starts_with(item, "rivet_conn_params.") && !out.conn_params) {
      if (auto decoded = util::percent_decode(item.substr(18))) {
        out.conn_params = std::move(*decoded);
      } else {
        out.conn_params = std::string("\x01");  // forces a params error (not valid JSON)
      }
    }
  }
  return out;
}

net::HttpResponse ActorRouter::error_response(const Error& error,
                                              client::Encoding encoding,
                                              const ActorInstance* instance) {
  net::HttpResponse resp;
  resp.status = public_status_code(error.group, error.code);
  resp.body =
      client::encode_http_error(encoding, router::to_error_message(error, std::nullopt, instance));
  resp.set_header("content-type", std::string(client::content_type(encoding)));
  if (instance != nullptr) {
    router::add_actor_headers(resp, *instance);
  }
  return resp;
}

}  // namespace rivetkit::core
