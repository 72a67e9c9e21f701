#include "local/gateway_path.hpp"

#include "protocol/cbor/cbor.hpp"
#include "protocol/compat.hpp"
#include "protocol/text/utf8.hpp"
#include "util/url.hpp"

#include <set>

namespace rivetkit::local {

namespace {

Error guard_error(std::string code, std::string message) {
  return Error{"guard", std::move(code), std::move(message), std::nullopt, true};
}

std::vector<std::string> split_key(std::string_view text) {
  std::vector<std::string> parts;
  if (text.empty()) {
    return parts;
  }
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    parts.emplace_back(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 1;
  }
  return parts;
}

/// Percent-decodes a component that becomes a protocol string (an actor id, name, key, token,
/// namespace...). Those travel as BARE/CBOR/JSON text, which must be valid UTF-8, and bytes that
/// are not would make distinct keys collide once replaced by U+FFFD in JSON, so invalid UTF-8
/// is refused like a malformed escape.
std::optional<std::string> decode_text(std::string_view raw, bool plus_is_space = false) {
  auto decoded = util::percent_decode(raw, plus_is_space);
  if (!decoded || !protocol::text::is_valid_utf8(*decoded)) {
    return std::nullopt;
  }
  return decoded;
}

}  // namespace

bool is_raw_request_path(std::string_view path) {
  return path == "/request" || path.substr(0, 9) == "/request/";
}

Result<GatewayRequest> parse_gateway_target(std::string_view target) {
  auto split = util::split_target(target);
  std::string_view path = split.path;
  constexpr std::string_view kPrefix = "/gateway/";
  if (path.substr(0, kPrefix.size()) != kPrefix) {
    return fail(guard_error("no_route", "No route found"));
  }
  path.remove_prefix(kPrefix.size());
  auto slash = path.find('/');
  std::string_view segment = path.substr(0, slash);
  std::string rest = slash == std::string_view::npos ? "/" : std::string(path.substr(slash));

  auto pairs = util::split_query(split.query);
  bool is_query = false;
  for (const auto& pair : pairs) {
    if (pair.raw_name.substr(0, 4) == "rvt-") {
      is_query = true;
      break;
    }
  }

  GatewayRequest out;
  std::string forwarded_query;
  if (!is_query) {
    for (const auto& pair : pairs) {
      if (!forwarded_query.empty()) {
        forwarded_query += '&';
      }
      forwarded_query += pair.raw;
    }
    if (split.has_query && pairs.empty()) {
      forwarded_query.clear();
    }
    auto at = segment.find('@');
    auto id = decode_text(segment.substr(0, at));
    std::optional<std::string> token;
    if (at != std::string_view::npos) {
      token = decode_text(segment.substr(at + 1));
      if (!token || token->empty()) {
        return fail(guard_error("no_route", "No route found"));
      }
    }
    if (!id || id->empty()) {
      return fail(guard_error("no_route", "No route found"));
    }
    out.direct = DirectTarget{std::move(*id), std::move(token)};
  } else {
    QueryTarget q;
    std::set<std::string> seen;
    bool has_method = false;
    bool has_namespace = false;
    for (const auto& pair : pairs) {
      if (pair.raw_name.substr(0, 4) != "rvt-") {
        if (!forwarded_query.empty()) {
          forwarded_query += '&';
        }
        forwarded_query += pair.raw;
        continue;
      }
      auto name = decode_text(pair.raw_name, true);
      auto value = decode_text(pair.raw_value, true);
      if (!name || !value) {
        return fail(
            guard_error("query_invalid_params",
                        "Invalid query parameter encoding (malformed escape or invalid UTF-8)"));
      }
      if (!seen.insert(*name).second) {
        return fail(guard_error("query_duplicate_param", "Duplicate query parameter: " + *name));
      }
      const std::string& n = *name;
      if (n == "rvt-namespace") {
        q.namespace_name = std::move(*value);
        has_namespace = true;
      } else if (n == "rvt-method") {
        if (*value == "get") {
          q.method = QueryTarget::Method::kGet;
        } else if (*value == "getOrCreate") {
          q.method = QueryTarget::Method::kGetOrCreate;
        } else {
          return fail(guard_error("query_invalid_params", "Unknown rvt-method: " + *value));
        }
        has_method = true;
      } else if (n == "rvt-runner" || n == "rvt-pool") {
        if (q.pool) {
          return fail(guard_error("query_duplicate_param", "Duplicate query parameter: " + n));
        }
        q.pool = std::move(*value);
      } else if (n == "rvt-key") {
        q.key = split_key(*value);
      } else if (n == "rvt-input") {
        auto bytes = protocol::base64url_decode(*value);
        if (!bytes) {
          return fail(
              guard_error("query_invalid_base64_input", "rvt-input is not valid base64url"));
        }
        std::string raw(bytes->begin(), bytes->end());
        if (!protocol::cbor_decode(raw)) {
          return fail(guard_error("query_invalid_cbor_input", "rvt-input is not valid CBOR"));
        }
        q.input = std::move(raw);
      } else if (n == "rvt-region") {
        q.region = std::move(*value);
      } else if (n == "rvt-crash-policy") {
        q.crash_policy = std::move(*value);
      } else if (n == "rvt-token") {
        q.token = std::move(*value);
      } else if (n == "rvt-skip-ready-wait") {
        q.skip_ready_wait = *value == "true" || *value == "1";
      } else {
        return fail(guard_error("query_invalid_params", "Unknown query parameter: " + n));
      }
    }
    auto actor_name = decode_text(segment);
    if (!actor_name) {
      return fail(guard_error("query_invalid_params",
                              "Invalid actor name encoding (malformed escape or invalid UTF-8)"));
    }
    if (actor_name->find('@') != std::string::npos) {
      return fail(guard_error("query_path_token_syntax",
                              "Query gateway paths cannot carry an @token segment"));
    }
    if (actor_name->empty()) {
      return fail(guard_error("query_empty_actor_name", "Actor name is empty"));
    }
    if (!has_method) {
      return fail(guard_error("query_invalid_params", "Missing rvt-method"));
    }
    if (!has_namespace || q.namespace_name.empty()) {
      return fail(guard_error("query_invalid_params", "Missing rvt-namespace"));
    }
    if (q.method == QueryTarget::Method::kGet) {
      if (q.input || q.region || q.crash_policy || q.pool) {
        return fail(
            guard_error("query_get_disallowed_params",
                        "rvt-method=get does not take input, region, crash policy or runner"));
      }
    } else if (!q.pool || q.pool->empty()) {
      return fail(guard_error("query_missing_pool", "rvt-method=getOrCreate needs rvt-runner"));
    }
    q.name = std::move(*actor_name);
    out.query = std::move(q);
  }
  out.actor_path = std::move(rest);
  if (!forwarded_query.empty()) {
    out.actor_path += '?';
    out.actor_path += forwarded_query;
  }
  return out;
}

}  // namespace rivetkit::local
