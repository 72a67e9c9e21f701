// Gateway request targets (local/gateway_path.cpp): /gateway/{id}[@token]PATH and the rvt-*
// query form, parsed from the raw HTTP request target. Inputs without the /gateway/ prefix get
// it, so the fuzzer does not spend its time on the trivial no_route answer.
// Invariant: a parsed target, written back the way the official client writes one
// (percent-encoded segment and rvt-* values), parses to the same fields and actor path.
#include "fuzz_support.hpp"
#include "local/gateway_path.hpp"
#include "protocol/compat.hpp"
#include "util/url.hpp"

namespace {

using rivetkit::local::GatewayRequest;
using rivetkit::local::QueryTarget;
using rivetkit::util::percent_encode;

void add_param(std::string& query, std::string_view name, std::string_view value) {
  query += query.empty() ? "" : "&";
  query += name;
  query += '=';
  query += percent_encode(value);
}

// The actor path is "/rest[?forwarded]"; the rebuilt target puts the rvt-* pairs after the
// forwarded ones (order between the two kinds does not matter to the parser).
std::string rebuild(const GatewayRequest& req) {
  const std::string_view path = req.actor_path;
  const auto q = path.find('?');
  std::string target = "/gateway/";
  std::string query = q == std::string_view::npos ? "" : std::string(path.substr(q + 1));
  if (req.direct) {
    target += percent_encode(req.direct->actor_id);
    if (req.direct->token) {
      target += '@' + percent_encode(*req.direct->token);
    }
  } else {
    const QueryTarget& t = *req.query;
    target += percent_encode(t.name);
    add_param(query, "rvt-namespace", t.namespace_name);
    add_param(query, "rvt-method", t.method == QueryTarget::Method::kGet ? "get" : "getOrCreate");
    if (!t.key.empty()) {
      std::string key;
      for (std::size_t i = 0; i < t.key.size(); ++i) {
        key += (i == 0 ? "" : ",") + t.key[i];
      }
      add_param(query, "rvt-key", key);
    }
    if (t.input) {
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(t.input->data());
      add_param(query, "rvt-input", rivetkit::protocol::base64url_encode({bytes, t.input->size()}));
    }
    const std::pair<const char*, const std::optional<std::string>*> optional_params[] = {
        {"rvt-runner", &t.pool},
        {"rvt-region", &t.region},
        {"rvt-crash-policy", &t.crash_policy},
        {"rvt-token", &t.token}};
    for (const auto& [name, value] : optional_params) {
      if (*value) {
        add_param(query, name, **value);
      }
    }
    if (t.skip_ready_wait) {
      add_param(query, "rvt-skip-ready-wait", "true");
    }
  }
  target += path.substr(0, q);
  if (!query.empty()) {
    target += '?' + query;
  }
  return target;
}

bool same_query(const QueryTarget& a, const QueryTarget& b) {
  return a.name == b.name && a.namespace_name == b.namespace_name && a.method == b.method
         && a.key == b.key && a.input == b.input && a.pool == b.pool && a.region == b.region
         && a.crash_policy == b.crash_policy && a.token == b.token
         && a.skip_ready_wait == b.skip_ready_wait;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string target(rivetkit::fuzz::as_text(data, size));
  if (target.rfind("/gateway/", 0) != 0) {
    target.insert(0, "/gateway/");
  }
  auto parsed = rivetkit::local::parse_gateway_target(target);
  if (!parsed) {
    return 0;
  }
  FUZZ_CHECK(parsed->direct.has_value() != parsed->query.has_value());
  FUZZ_CHECK(!parsed->actor_path.empty() && parsed->actor_path[0] == '/');
  (void)rivetkit::local::is_raw_request_path(parsed->actor_path);

  const std::string again_target = rebuild(*parsed);
  auto again = rivetkit::local::parse_gateway_target(again_target);
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(again->actor_path == parsed->actor_path);
  FUZZ_CHECK(again->direct.has_value() == parsed->direct.has_value());
  if (parsed->direct) {
    FUZZ_CHECK(again->direct->actor_id == parsed->direct->actor_id);
    FUZZ_CHECK(again->direct->token == parsed->direct->token);
  } else {
    FUZZ_CHECK(same_query(*again->query, *parsed->query));
  }
  return 0;
}
