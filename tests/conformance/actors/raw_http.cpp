// raw-http.ts and raw-http-request-properties.ts: onRequest routing, echo, 404/500, a small REST
// router, and a handler that reflects every property of the request.

#include "actors/request_view.hpp"
#include "fixture.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fixture {
namespace {

struct RawHttpState {
  std::int64_t requestCount = 0;
};
RIVETKIT_FIELDS(RawHttpState, requestCount)

rivetkit::ActorDefinition raw_http_actor() {
  return rivetkit::actor<RawHttpState>("rawHttpActor")
      .on_request([](auto& c, const rivetkit::Request& req) {
        c.state().requestCount += 1;
        if (req.path == "/api/hello") {
          return rivetkit::Response::json(
              json(rivetkit::Value::object({{"message", "Hello from actor!"}})));
        }
        if (req.path == "/api/echo" && req.method == "POST") {
          // The request's body with the request's headers.
          rivetkit::Response resp(200, req.body);
          for (const auto& h : req.headers) {
            resp.set_header(h.name, h.value);
          }
          return resp;
        }
        if (req.path == "/api/state") {
          return rivetkit::Response::json(
              json(rivetkit::Value::object({{"requestCount", c.state().requestCount}})));
        }
        if (req.path == "/api/headers") {
          return rivetkit::Response::json(json(headers_object(req)));
        }
        return rivetkit::Response(404, "Not Found");
      });
}

rivetkit::ActorDefinition raw_http_no_handler_actor() {
  return rivetkit::actor<>("rawHttpNoHandlerActor");
}

rivetkit::ActorDefinition raw_http_void_return_actor() {
  // A handler that returns nothing: the runtime answers 500.
  return rivetkit::actor<>("rawHttpVoidReturnActor")
      .on_request([](auto&, const rivetkit::Request&) {});
}

// ---- rawHttpHonoActor: the TS fixture keeps a Hono router in vars; this is the same routes ----

/// JS parseInt(text, 10) for the route parameter: leading digits, else NaN (null in JSON).
rivetkit::Value parse_int(std::string_view text) {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    negative = text[i] == '-';
    ++i;
  }
  std::int64_t n = 0;
  std::size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 15; ++i, ++digits) {
    n = n * 10 + (text[i] - '0');
  }
  if (digits == 0) {
    return rivetkit::Value{};  // NaN serialises as null
  }
  return rivetkit::Value{negative ? -n : n};
}

rivetkit::Response json_response(const rivetkit::Value& v, unsigned status = 200) {
  return rivetkit::Response::json(json(v), status);
}

/// `{ id, ...body }`: body's keys after id (a body `id` replaces it in place).
rivetkit::Value with_id(rivetkit::Value id, const rivetkit::Value& body) {
  rivetkit::Value out = rivetkit::Value::object({{"id", std::move(id)}});
  if (body.is_object()) {
    for (const auto& m : body.as_object()) {
      out.set(m.key, m.value);
    }
  }
  return out;
}

rivetkit::Response hono_route(const rivetkit::Request& req) {
  // "/" -> [], "/users" -> ["users"], "/users/1" -> ["users", "1"], "/users/" -> ["users", ""]
  std::vector<std::string_view> segments;
  std::string_view rest = req.path;
  while (!rest.empty() && rest.front() == '/') {
    rest.remove_prefix(1);
    auto slash = rest.find('/');
    if (slash == std::string_view::npos && rest.empty() && segments.empty()) {
      break;
    }
    segments.push_back(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  }
  const std::string& m = req.method;
  if (segments.empty() && m == "GET") {
    return json_response(rivetkit::Value::object({{"message", "Welcome to Hono actor!"}}));
  }
  if (segments.size() == 1 && segments[0] == "users") {
    if (m == "GET") {
      return json_response(
          rivetkit::Value::array({rivetkit::Value::object({{"id", 1}, {"name", "Alice"}}),
                                  rivetkit::Value::object({{"id", 2}, {"name", "Bob"}})}));
    }
    if (m == "POST") {
      auto body = parse(req.body);
      if (!body) {
        return rivetkit::Response(500, "Internal Server Error");  // c.req.json() throws
      }
      return json_response(with_id(3, *body), 201);
    }
  }
  if (segments.size() == 2 && segments[0] == "users" && !segments[1].empty()) {
    std::string id(segments[1]);
    if (m == "GET") {
      return json_response(
          rivetkit::Value::object({{"id", parse_int(id)}, {"name", id == "1" ? "Alice" : "Bob"}}));
    }
    if (m == "PUT") {
      auto body = parse(req.body);
      if (!body) {
        return rivetkit::Response(500, "Internal Server Error");
      }
      return json_response(with_id(parse_int(id), *body));
    }
    if (m == "DELETE") {
      return json_response(rivetkit::Value::object({{"message", "User " + id + " deleted"}}));
    }
  }
  return rivetkit::Response::text("404 Not Found", 404);
}

rivetkit::ActorDefinition raw_http_hono_actor() {
  return rivetkit::actor<>("rawHttpHonoActor").on_request([](auto&, const rivetkit::Request& req) {
    return hono_route(req);
  });
}

// ---- raw-http-request-properties.ts ----------------------------------------------------------

rivetkit::ActorDefinition raw_http_request_properties_actor() {
  return rivetkit::actor<>("rawHttpRequestPropertiesActor")
      .on_request([](auto&, const rivetkit::Request& req) {
        if (req.method == "HEAD") {
          return rivetkit::Response(200, "");
        }
        if (req.method == "OPTIONS") {
          return rivetkit::Response(204, "");
        }
        // A rivetkit::Request has a body string, not a stream: an empty body counts as none.
        const bool has_body = !req.body.empty();
        rivetkit::Value body;  // null
        if (has_body) {
          std::string content_type(req.header("content-type").value_or(""));
          if (content_type.find("application/json") != std::string::npos) {
            if (auto parsed = parse(req.body)) {
              body = std::move(*parsed);
            }
          } else {
            body = req.body;
          }
        }
        rivetkit::Value body_text;  // null
        if (body.is_string()) {
          body_text = body;
        } else if (body.is_null() && has_body) {
          body_text = "";
        }
        rivetkit::Value out = rivetkit::Value::object({
            {"url", request_url(req)},
            {"pathname", req.path},
            {"search", req.search},
            {"searchParams", search_params(req.search)},
            {"hash", ""},  // fragments never reach a server
            {"method", req.method},
            {"headers", headers_object(req)},
            {"body", body},
            {"bodyText", body_text},
            // Fetch-API properties of a JS Request object (cache mode, credentials mode, ...);
            // an HTTP request received by a server has none of them.
            {"cache", nullptr},
            {"credentials", nullptr},
            {"mode", nullptr},
            {"redirect", nullptr},
            {"referrer", nullptr},
        });
        return rivetkit::Response::json(json(out));
      });
}

}  // namespace

void add_raw_http_actors(rivetkit::Registry& registry) {
  registry.add(raw_http_actor());
  registry.add(raw_http_no_handler_actor());
  registry.add(raw_http_void_return_actor());
  registry.add(raw_http_hono_actor());
  registry.add(raw_http_request_properties_actor());
}

}  // namespace fixture
