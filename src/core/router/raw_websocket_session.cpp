// WS /websocket[/...] (any path but /connect): a raw WebSocket for the actor's on_websocket.

#include "core/router/surfaces.hpp"
#include "protocol/json/json.hpp"

#include <algorithm>
#include <deque>

namespace rivetkit::core::router {

namespace client = protocol::client;

namespace {

// Test mode (RivetKit's `test.enabled`): `{"__rivetkitTestHibernatableAckStateV1": true}` on a
// raw socket asks where its acknowledgements stand. The session answers it (it is not delivered,
// and not counted among the actor's messages, though it takes an index on the wire) from what it
// delivered, which outlives the actor's sleeps: the last delivered index, the last one the
// gateway has acknowledged (local sockets: all of them), and those in between.
struct AckProbeState {
  std::deque<std::uint16_t> delivered;  // newest last, bounded

  void note(std::uint16_t index) {
    delivered.push_back(index);
    if (delivered.size() > 1024) {
      delivered.pop_front();
    }
  }
  bool answer(const net::WsMessage& message, net::WebSocket& socket) const {
    constexpr std::string_view kProbe = "__rivetkitTestHibernatableAckStateV1";
    if (message.binary || message.data.find(kProbe) == std::string::npos) {
      return false;
    }
    auto parsed = protocol::json_parse(message.data);
    const Value* flag = parsed && parsed->is_object() ? parsed->find(kProbe) : nullptr;
    if (flag == nullptr || !flag->is_bool() || !flag->as_bool()) {
      return false;
    }
    const std::int64_t last_sent = delivered.empty() ? 0 : delivered.back();
    std::int64_t acked = last_sent;
    if (socket.resume_point()) {
      auto a = socket.acked_index();
      acked = a ? std::min<std::int64_t>(*a, last_sent) : 0;
    }
    Array pending;
    for (auto index : delivered) {
      if (index > acked) {
        pending.emplace_back(static_cast<std::int64_t>(index));
      }
    }
    Value reply = Value::object({{std::string(kProbe), true},
                                 {"lastSentIndex", last_sent},
                                 {"lastAckedIndex", acked},
                                 {"pendingIndexes", Value(std::move(pending))}});
    socket.send(net::WsMessage{false, protocol::json_stringify(reply)});
    return true;
  }
};

}  // namespace

Task<void> raw_websocket(ActorTarget target,
                         net::HttpRequest req,
                         std::string path,
                         std::string search,
                         std::shared_ptr<net::WebSocket> socket) {
  WsProtocols protocols = parse_ws_protocols(req);
  auto params = parse_params(protocols.conn_params);
  if (!params) {
    socket->close(1011, params.error().qualified_code());
    co_return;
  }
  OpenConnectionCommand command;
  command.kind = ConnKind::kRawWebSocket;
  command.params = std::move(*params);
  command.request = to_user_request(req, std::move(path), std::move(search));
  command.encoding = client::Encoding::kBare;
  command.socket = socket;
  // Engine mode: the open runs only on the generation it was sent to (ActorTarget::generation).
  auto open_op = target.runtime->dispatch(target.actor_id(), std::move(command), target.generation);
  auto opened = co_await std::move(open_op);
  if (!opened.result) {
    socket->close(1011, opened.result.error().qualified_code());
    co_return;
  }
  auto session_op = raw_websocket_session(std::move(target), std::move(opened.result->conn_id),
                                          opened.result->hibernatable, socket);
  co_await std::move(session_op);
}

// The message loop of a raw socket whose connection exists (see connect_session).
Task<void> raw_websocket_session(ActorTarget target,
                                 std::string conn_id,
                                 bool hibernatable,
                                 std::shared_ptr<net::WebSocket> socket) {
  if (hibernatable && target.sockets != nullptr) {
    target.sockets->add(conn_id, socket);
  }
  // A hibernatable socket of this process (local mode) numbers its messages here, as the
  // gateway numbers them in engine mode; the session outlives the actor's sleeps, so the
  // numbering continues across them.
  std::uint16_t local_index = 0;
  const bool test_mode = target.runtime->config().test_mode;
  AckProbeState probe;
  while (true) {
    auto receive_op = socket->receive();
    auto msg = co_await std::move(receive_op);
    if (!msg) {
      break;
    }
    if (hibernatable && !msg->index) {
      msg->index = ++local_index;
    }
    if (test_mode && probe.answer(*msg, *socket)) {
      continue;
    }
    if (msg->index) {
      probe.note(*msg->index);
    }
    auto delivered_op = deliver(target, *socket, RawMessageCommand{conn_id, std::move(*msg)});
    co_await std::move(delivered_op);
  }
  auto end_op = end_session(target, conn_id, hibernatable, socket->close_info());
  co_await std::move(end_op);
}

}  // namespace rivetkit::core::router
