// WS /inspector/connect: the inspector WebSocket (core-semantics.md §9). The version comes from
// `?protocol_version=N` (1..6; plain BARE of that version) or, absent, the legacy framing (each
// frame carries its version; the server speaks 5). The token comes as the subprotocol
// `rivet_inspector_token.<token>` (or an Authorization header). The socket attaches to the actor
// (Init, then live pushes: core/inspector/inspector_watchers.hpp); each request is answered by id
// through the same inspector requests as the HTTP routes.

#include "core/errors.hpp"
#include "core/inspector/inspector.hpp"
#include "core/inspector/inspector_token.hpp"
#include "core/router/surfaces.hpp"
#include "protocol/cbor/cbor.hpp"
#include "protocol/compat.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <limits>

namespace rivetkit::core::router {

namespace {

namespace wire = protocol::inspector;
using inspector::InspectorRequest;
using inspector::InspectorWatchers;

// The most messages a queue request lists (RivetKit clamps the same way).
constexpr std::uint64_t kMaxQueueLimit = 200;

std::string cbor_of(const Value& v) {
  return protocol::cbor_encode(protocol::compat_encode(v, protocol::CompatMode::kCbor));
}

Result<Value> value_of(std::string_view cbor) {
  auto decoded = protocol::cbor_decode(cbor);
  if (!decoded) {
    return fail(invalid_request("The payload is not valid CBOR: " + decoded.error().message));
  }
  return protocol::compat_decode(*decoded);
}

// The socket's wire: the version it names, or the legacy framing; nullopt for a bad version.
std::optional<InspectorWatchers::Wire> wire_of(std::string_view search) {
  auto text = query_value(search, "protocol_version");
  if (!text) {
    return InspectorWatchers::Wire{wire::kLegacyVersion, true};
  }
  unsigned version = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), version);
  if (ec != std::errc() || end != text->data() + text->size() || version < wire::kMinVersion
      || version > wire::kMaxVersion) {
    return std::nullopt;
  }
  return InspectorWatchers::Wire{static_cast<std::uint16_t>(version), false};
}

// A workflow answer's history as the WebSocket carries it (none when there is none yet).
std::optional<std::string> transport_of(const Value& v) {
  const auto* bytes = v.find("historyTransport");
  if (bytes == nullptr || !bytes->is_bytes()) {
    return std::nullopt;
  }
  return std::string(bytes->as_bytes().begin(), bytes->as_bytes().end());
}

bool enabled_of(const Value& v) {
  const auto* enabled = v.find("isWorkflowEnabled");
  return enabled != nullptr && enabled->is_bool() && enabled->as_bool();
}

std::uint64_t as_u64(const Value* v) {
  if (v == nullptr) {
    return 0;
  }
  if (v->is_int()) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(v->as_int(), 0));
  }
  if (v->is_string()) {
    std::uint64_t out = 0;
    const auto& s = v->as_string();
    std::from_chars(s.data(), s.data() + s.size(), out);
    return out;
  }
  return 0;
}

// What one request becomes: the inspector request to dispatch (none: answered here), and how its
// answer is written.
struct Planned {
  std::optional<InspectorRequest> request;
  std::function<wire::ToClient(Value)> reply;
};

Result<Planned> plan(wire::ToServer message) {
  using namespace inspector;
  Planned p;
  if (auto* m = std::get_if<wire::PatchStateRequest>(&message)) {
    auto state = value_of(m->state);
    if (!state) {
      return fail(state.error());
    }
    p.request = PatchState{std::move(*state)};
    p.reply = nullptr;  // answered with the state now held (below)
    return p;
  }
  if (auto* m = std::get_if<wire::StateRequest>(&message)) {
    p.request = GetState{};
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      const bool enabled = v.find("isStateEnabled")->as_bool();
      return wire::StateResponse{
          rid, enabled ? std::optional<std::string>(cbor_of(*v.find("state"))) : std::nullopt,
          enabled};
    };
    return p;
  }
  if (auto* m = std::get_if<wire::ConnectionsRequest>(&message)) {
    p.request = GetConnections{};
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      wire::ConnectionsResponse out{rid, {}};
      for (const auto& c : v.find("connections")->as_array()) {
        out.connections.push_back(
            wire::Connection{c.find("id")->as_string(), cbor_of(*c.find("details"))});
      }
      return out;
    };
    return p;
  }
  if (auto* m = std::get_if<wire::ActionRequest>(&message)) {
    auto args = value_of(m->args);
    if (!args) {
      return fail(args.error());
    }
    RunAction action;
    action.name = m->name;
    action.args = args->is_array() ? std::move(args->as_array()) : Array{std::move(*args)};
    action.request.method = "POST";
    action.request.path = "/inspector/action/" + m->name;
    p.request = std::move(action);
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      return wire::ActionResponse{rid, cbor_of(*v.find("output"))};
    };
    return p;
  }
  if (auto* m = std::get_if<wire::RpcsListRequest>(&message)) {
    p.request = GetRpcs{};
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      wire::RpcsListResponse out{rid, {}};
      for (const auto& name : v.find("rpcs")->as_array()) {
        out.rpcs.push_back(name.as_string());
      }
      return out;
    };
    return p;
  }
  if (auto* m = std::get_if<wire::TraceQueryRequest>(&message)) {
    p.reply = [rid = m->id](Value) -> wire::ToClient {
      return wire::TraceQueryResponse{rid, {}};
    };
    return p;
  }
  if (auto* m = std::get_if<wire::QueueRequest>(&message)) {
    p.request =
        GetQueue{static_cast<std::size_t>(std::clamp<std::uint64_t>(m->limit, 1, kMaxQueueLimit))};
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      wire::QueueResponse out;
      out.rid = rid;
      out.size = as_u64(v.find("size"));
      out.max_size = as_u64(v.find("maxSize"));
      out.truncated = v.find("truncated")->as_bool();
      for (const auto& q : v.find("messages")->as_array()) {
        out.messages.push_back(wire::QueueMessageSummary{
            as_u64(q.find("id")), q.find("name")->as_string(), as_u64(q.find("createdAtMs"))});
      }
      return out;
    };
    return p;
  }
  if (auto* m = std::get_if<wire::WorkflowHistoryRequest>(&message)) {
    p.request = GetWorkflowHistory{true};
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      return wire::WorkflowHistoryResponse{rid, transport_of(v), enabled_of(v)};
    };
    return p;
  }
  if (auto* m = std::get_if<wire::WorkflowReplayRequest>(&message)) {
    p.request = ReplayWorkflow{m->entry_id, true};
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      return wire::WorkflowReplayResponse{rid, transport_of(v), enabled_of(v)};
    };
    return p;
  }
  if (auto* m = std::get_if<wire::DatabaseSchemaRequest>(&message)) {
    p.request = GetDatabaseSchema{};
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      return wire::DatabaseSchemaResponse{rid, cbor_of(*v.find("schema"))};
    };
    return p;
  }
  if (auto* m = std::get_if<wire::DatabaseTableRowsRequest>(&message)) {
    GetDatabaseRows rows;
    rows.table = m->table;
    rows.limit = static_cast<std::int64_t>(std::min<std::uint64_t>(m->limit, 500));
    rows.offset = static_cast<std::int64_t>(
        std::min<std::uint64_t>(m->offset, std::numeric_limits<std::uint32_t>::max()));
    if (rows.table.empty()) {
      return fail(invalid_request("Missing required table"));
    }
    p.request = std::move(rows);
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      return wire::DatabaseTableRowsResponse{rid, cbor_of(*v.find("rows"))};
    };
    return p;
  }
  if (auto* m = std::get_if<wire::SchedulesRequest>(&message)) {
    p.request = GetSchedules{};
    p.reply = [rid = m->id](Value v) -> wire::ToClient {
      wire::SchedulesResponse out{rid, {}};
      for (const auto& e : v.as_array()) {
        wire::Schedule s;
        s.id = e.find("id")->as_string();
        s.kind = "at";
        s.action = e.find("action")->as_string();
        s.args = cbor_of(*e.find("args"));
        s.next_run_at = as_u64(e.find("atMs"));
        out.schedules.push_back(std::move(s));
      }
      return out;
    };
    return p;
  }
  if (auto* m = std::get_if<wire::ScheduleHistoryRequest>(&message)) {
    p.reply = [rid = m->id, id = m->schedule_id](Value) -> wire::ToClient {
      return wire::ScheduleHistoryResponse{rid, id};
    };
    return p;
  }
  if (auto* m = std::get_if<wire::ScheduleDeleteRequest>(&message)) {
    if (m->kind != "at") {
      return fail(invalid_request("Only `at` schedules exist here; kind " + m->kind
                                  + " cannot be deleted"));
    }
    p.request = DeleteSchedule{m->schedule_id};
    p.reply = [rid = m->id, id = m->schedule_id](Value v) -> wire::ToClient {
      return wire::ScheduleDeleteResponse{rid, id, v.find("deleted")->as_bool()};
    };
  }
  return p;
}

wire::ToClient error_frame(const Error& e) {
  const Error shown = sanitize_for_client(e);
  return wire::ErrorMessage{shown.message.empty() ? shown.qualified_code() : shown.message};
}

}  // namespace

Task<void> inspector_websocket(ActorTarget target,
                               net::HttpRequest req,
                               std::string search,
                               std::shared_ptr<net::WebSocket> socket) {
  const auto& config = target.runtime->config();
  auto w = wire_of(search);
  if (!w) {
    socket->close(1002, "inspector.invalid_protocol_version");
    co_return;
  }
  if (!config.inspector_enabled) {
    socket->close(1008, "inspector.disabled");
    co_return;
  }
  std::optional<std::string> token;
  if (auto protocols = req.header("sec-websocket-protocol")) {
    token = inspector::subprotocol_token(*protocols);
  }
  if (!token) {
    if (auto auth = req.header("authorization")) {
      token = inspector::bearer_token(*auth);
    }
  }
  InspectorCommand attach;
  attach.token = std::move(token);
  attach.request = inspector::AttachSocket{socket, *w};
  auto attach_op =
      target.runtime->dispatch(target.actor_id(), std::move(attach), target.generation);
  auto attached = co_await std::move(attach_op);
  if (!attached.result) {
    const auto& e = attached.result.error();
    const bool refused = e.group == "inspector" && e.code == "unauthorized";
    socket->close(refused ? 1008 : 1011, refused ? "inspector.unauthorized" : e.qualified_code());
    co_return;
  }
  auto instance = attached.instance;

  const auto max_incoming = config.max_incoming_message_size;
  auto send = [&](const wire::ToClient& message) {
    socket->send(net::WsMessage{true, InspectorWatchers::encode(message, *w)});
  };
  while (true) {
    auto receive_op = socket->receive();
    auto msg = co_await std::move(receive_op);
    if (!msg) {
      break;
    }
    if (msg->data.size() > max_incoming) {
      socket->close(1011, "message.incoming_too_long");
      continue;
    }
    auto decoded = w->embedded ? wire::decode_to_server_embedded(msg->data)
                               : wire::decode_to_server(msg->data, w->version);
    if (!decoded) {
      log::info("undecodable inspector frame actor_id={}: {}", target.actor_id(),
                decoded.error().message);
      send(wire::ErrorMessage{decoded.error().message});
      continue;
    }
    auto planned = plan(std::move(*decoded));
    if (!planned) {
      send(error_frame(planned.error()));
      continue;
    }
    if (!planned->request) {
      send(planned->reply(Value()));
      continue;
    }
    const bool patch = std::holds_alternative<inspector::PatchState>(*planned->request);
    InspectorCommand command;
    command.preauthorized = true;
    command.request = std::move(*planned->request);
    // In arrival order: the next request is read once this one is answered.
    auto op = target.runtime->dispatch(target.actor_id(), std::move(command));
    auto done = co_await std::move(op);
    if (!done.result) {
      send(error_frame(done.result.error()));
      continue;
    }
    if (patch) {
      // RivetKit answers a patch with the state now held.
      InspectorCommand read;
      read.preauthorized = true;
      read.request = inspector::GetState{};
      auto read_op = target.runtime->dispatch(target.actor_id(), std::move(read));
      auto state = co_await std::move(read_op);
      if (state.result && state.result->find("state") != nullptr) {
        send(wire::StateUpdated{cbor_of(*state.result->find("state"))});
      }
      continue;
    }
    send(planned->reply(std::move(*done.result)));
  }
  if (instance) {
    util::spawn(instance->strand(), inspector::detach(instance, socket.get()), "inspector detach");
  }
}

}  // namespace rivetkit::core::router
