// HTTP queue send bodies (client-protocol.md §6.4).

#include "protocol/bare/bare.hpp"
#include "protocol/client/messages.hpp"
#include "protocol/client/wire_support.hpp"
#include "protocol/compat.hpp"
#include "protocol/decode_error.hpp"

#include <cmath>

namespace rivetkit::protocol::client {

namespace {

constexpr std::string_view kRequest = "HttpQueueSendRequest";
constexpr std::string_view kResponse = "HttpQueueSendResponse";

// A JSON number may be written as 5000 or 5000.0; both are the integer the TS client meant.
Result<std::uint64_t> read_timeout(const Value& v) {
  if (v.is_double()) {
    const double d = v.as_double();
    if (d >= 0 && d < 18446744073709551616.0 && d == std::trunc(d)) {
      return static_cast<std::uint64_t>(d);
    }
  }
  return detail::read_uint(v, std::string(kRequest) + ".timeout");
}

Result<QueueSendRequest> decode_document(Encoding e,
                                         std::string_view body,
                                         const DecodeLimits& limits) {
  auto root = detail::parse_object(e, body, limits, kRequest);
  if (!root) {
    return tl::unexpected(root.error());
  }
  QueueSendRequest out;
  // JSON.stringify drops an undefined body, so a missing body is undefined.
  if (const Value* b = root->find("body")) {
    auto revived = compat_decode(*b);
    if (!revived) {
      return tl::unexpected(revived.error());
    }
    out.body = std::move(*revived);
  } else {
    out.body = Value(Undefined{});
  }
  if (const Value* name = root->find("name"); !detail::is_absent(name)) {
    if (!name->is_string()) {
      return fail_decode(std::string(kRequest) + ": `name` must be a string");
    }
    out.name = name->as_string();
  }
  if (const Value* wait = root->find("wait"); !detail::is_absent(wait)) {
    if (!wait->is_bool()) {
      return fail_decode(std::string(kRequest) + ": `wait` must be a boolean");
    }
    out.wait = wait->as_bool();
  }
  // cbor-x writes an omitted timeout as undefined (f7): treat it like absence.
  if (const Value* timeout = root->find("timeout"); !detail::is_absent(timeout)) {
    auto ms = read_timeout(*timeout);
    if (!ms) {
      return tl::unexpected(ms.error());
    }
    out.timeout_ms = *ms;
  }
  return out;
}

Result<QueueSendRequest> decode_bare(std::string_view body, const DecodeLimits& limits) {
  bare::Reader r(body);
  if (auto version = detail::read_version(r, kRequest); !version) {
    return tl::unexpected(version.error());
  }
  QueueSendRequest out;
  std::string body_data;
  if (!r.data(body_data)) {
    return detail::bare_field_error(kRequest, "body");
  }
  bool present = false;
  if (!r.optional_tag(present)) {
    return detail::bare_field_error(kRequest, "name");
  }
  if (present) {
    std::string name;
    if (!r.str(name)) {
      return detail::bare_field_error(kRequest, "name");
    }
    out.name = std::move(name);
  }
  if (!r.optional_tag(present)) {
    return detail::bare_field_error(kRequest, "wait");
  }
  if (present && !r.boolean(out.wait)) {
    return detail::bare_field_error(kRequest, "wait");
  }
  if (!r.optional_tag(present)) {
    return detail::bare_field_error(kRequest, "timeout");
  }
  if (present) {
    std::uint64_t timeout = 0;
    if (!r.u64(timeout)) {
      return detail::bare_field_error(kRequest, "timeout");
    }
    out.timeout_ms = timeout;
  }
  if (auto end = detail::expect_end(r, kRequest); !end) {
    return tl::unexpected(end.error());
  }
  auto decoded = detail::decode_compat_cbor(body_data, limits);
  if (!decoded) {
    return tl::unexpected(decoded.error());
  }
  out.body = std::move(*decoded);
  return out;
}

}  // namespace

Result<QueueSendRequest> decode_http_queue_send(Encoding e,
                                                std::string_view body,
                                                const DecodeLimits& limits) {
  if (e == Encoding::kBare) {
    return decode_bare(body, limits);
  }
  return decode_document(e, body, limits);
}

std::string encode_http_queue_send_response(Encoding e,
                                            std::string_view status,
                                            const std::optional<Value>& response) {
  if (e == Encoding::kBare) {
    std::string out;
    bare::Writer w(out);
    detail::write_version(w);
    w.str(status);
    w.optional_tag(response.has_value());
    if (response) {
      w.data(detail::encode_compat_cbor(*response));
    }
    return out;
  }
  // Sorted keys, as rivetkit-core writes this map.
  Value doc{Object{}};
  if (response) {
    doc.set("response", detail::user_value_out(e, *response));
  }
  doc.set("status", status);
  return detail::serialize_document(e, doc);
}

std::string encode_http_queue_send_request(Encoding e, const QueueSendRequest& request) {
  if (e == Encoding::kBare) {
    std::string out;
    bare::Writer w(out);
    detail::write_version(w);
    w.data(detail::encode_compat_cbor(request.body));
    w.optional_tag(request.name.has_value());
    if (request.name) {
      w.str(*request.name);
    }
    w.optional_tag(true);
    w.boolean(request.wait);
    w.optional_tag(request.timeout_ms.has_value());
    if (request.timeout_ms) {
      w.u64(*request.timeout_ms);
    }
    return out;
  }
  Value doc{Object{}};
  doc.set("body", detail::user_value_out(e, request.body));
  if (request.name) {
    doc.set("name", *request.name);
  }
  doc.set("wait", request.wait);
  if (request.timeout_ms) {
    doc.set("timeout", static_cast<std::int64_t>(*request.timeout_ms));
  }
  return detail::serialize_document(e, doc);
}

Result<QueueSendResponse> decode_http_queue_send_response(Encoding e,
                                                          std::string_view body,
                                                          const DecodeLimits& limits) {
  QueueSendResponse out;
  if (e == Encoding::kBare) {
    bare::Reader r(body);
    if (auto version = detail::read_version(r, kResponse); !version) {
      return tl::unexpected(version.error());
    }
    if (!r.str(out.status)) {
      return detail::bare_field_error(kResponse, "status");
    }
    bool present = false;
    if (!r.optional_tag(present)) {
      return detail::bare_field_error(kResponse, "response");
    }
    if (present) {
      std::string data;
      if (!r.data(data)) {
        return detail::bare_field_error(kResponse, "response");
      }
      auto decoded = detail::decode_compat_cbor(data, limits);
      if (!decoded) {
        return tl::unexpected(decoded.error());
      }
      out.response = std::move(*decoded);
    }
    if (auto end = detail::expect_end(r, kResponse); !end) {
      return tl::unexpected(end.error());
    }
    return out;
  }
  auto root = detail::parse_object(e, body, limits, kResponse);
  if (!root) {
    return tl::unexpected(root.error());
  }
  const Value* status = root->find("status");
  if (status == nullptr || !status->is_string()) {
    return fail_decode(std::string(kResponse) + ": `status` must be a string");
  }
  out.status = status->as_string();
  if (const Value* response = root->find("response"); !detail::is_absent(response)) {
    auto revived = compat_decode(*response);
    if (!revived) {
      return tl::unexpected(revived.error());
    }
    out.response = std::move(*revived);
  }
  return out;
}

}  // namespace rivetkit::protocol::client
