#include "core/actor/connection_lifecycle.hpp"

#include "core/actor/hook_runner.hpp"
#include "core/errors.hpp"
#include "core/ids.hpp"
#include "core/raw_websocket.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"

#include <optional>

namespace rivetkit::core {

ConnectionLifecycle::ConnectionLifecycle(boost::asio::any_io_executor strand,
                                         std::string actor_id,
                                         const detail::ActorDefinitionData& definition,
                                         const Lifecycle& lifecycle,
                                         SleepGates& sleep,
                                         ConnectionSet& conns,
                                         Host& host)
    : strand_(std::move(strand)),
      actor_id_(std::move(actor_id)),
      definition_(definition),
      lifecycle_(lifecycle),
      sleep_(sleep),
      conns_(conns),
      host_(host) {}

// ---- opening and ending -------------------------------------------------------------------------

Task<Result<std::shared_ptr<Connection>>> ConnectionLifecycle::open(
    ConnKind kind,
    Value params,
    Request request,
    protocol::client::Encoding encoding,
    std::shared_ptr<net::WebSocket> transport) {
  auto owner = host_.hold();
  sleep_.note_request();
  if (!lifecycle_.accepting()) {
    co_return std::shared_ptr<Connection>();
  }
  const auto& hooks = definition_.hooks;
  const auto& options = definition_.options;
  auto conn =
      conns_.make(new_uuid_v4(), kind, params, std::move(request), encoding, std::move(transport));
  if (kind == ConnKind::kActorConnect) {
    conn->set_hibernatable(true);
  } else if (kind == ConnKind::kRawWebSocket && options.can_hibernate_websocket) {
    conn->set_hibernatable(options.can_hibernate_websocket(conn->request()));
  }
  if (hooks.on_before_connect) {
    auto task = hooks.on_before_connect(host_.hooks_target(), params, &conn->request());
    auto r = co_await host_.run_hook("onBeforeConnect", std::move(task),
                                     options.on_before_connect_timeout);
    if (!r) {
      co_return fail(r.error());
    }
  }
  {
    auto create = [](const detail::ActorHooks& h, detail::ActorApi* actor,
                     std::shared_ptr<Connection> c, Value p) -> Task<void> {
      auto task = h.create_conn_data(actor, std::move(p), &c->request());
      c->set_user_data(co_await std::move(task));
    };
    auto r = co_await host_.run_hook("createConnState",
                                     create(hooks, host_.hooks_target(), conn, params),
                                     options.create_conn_state_timeout);
    if (!r) {
      co_return fail(r.error());
    }
  }
  if (!lifecycle_.is(LifecycleState::kStarted)) {
    co_return std::shared_ptr<Connection>();
  }
  conns_.add(conn);
  sleep_.touch();
  if (hooks.on_connect) {
    auto task = hooks.on_connect(host_.hooks_target(), conn.get());
    auto r = co_await host_.run_hook("onConnect", std::move(task), options.on_connect_timeout);
    if (!r) {
      conns_.discard(conn->id());
      sleep_.touch();
      co_return fail(r.error());
    }
  }
  conns_.mark_dirty(conn->id());  // stored from now on, when hibernatable
  co_return conn;
}

Task<void> ConnectionLifecycle::close(std::shared_ptr<Connection> conn) {
  auto owner = host_.hold();
  if (!conns_.remove(conn)) {
    co_return;  // already removed: exactly one on_disconnect per connection
  }
  if (definition_.hooks.on_disconnect) {
    auto work = track(WorkKind::kDisconnect);
    auto task = definition_.hooks.on_disconnect(host_.hooks_target(), conn.get());
    co_await host_.run_hook("onDisconnect", std::move(task),
                            definition_.options.on_connect_timeout);
  }
  sleep_.touch();
}

Task<void> ConnectionLifecycle::end(std::shared_ptr<Connection> conn,
                                    std::uint16_t code,
                                    std::string reason) {
  auto owner = host_.hold();
  if (conn->ending) {
    co_return;  // the other side is ending it already: one close handler, one on_disconnect
  }
  conn->ending = true;
  if (conn->raw_socket && conn->raw_socket->on_close) {
    auto work = track(WorkKind::kWsCallback);
    auto handler = conn->raw_socket->on_close;
    auto task = handler(code, reason);
    co_await guarded("websocket close", actor_id_, std::move(task));
  }
  conn->close(code, reason);
  auto op = close(conn);
  co_await std::move(op);
  if (conn->raw_socket) {
    conn->raw_socket->on_message = nullptr;
    conn->raw_socket->on_close = nullptr;
  }
}

namespace {

// Runs an event's can_subscribe rule into `allowed` (a Task<void> for the hook runner).
Task<void> ask_rule(std::function<Task<bool>(detail::ActorApi*, detail::ConnApi*)> rule,
                    detail::ActorApi* actor,
                    std::shared_ptr<Connection> conn,
                    std::shared_ptr<bool> allowed) {
  auto op = rule(actor, conn.get());
  *allowed = co_await std::move(op);
}

}  // namespace

Task<void> ConnectionLifecycle::subscription(std::shared_ptr<Connection> conn,
                                             std::string event,
                                             bool subscribe) {
  if (!subscribe) {
    conn->unsubscribe(event);
    co_return;
  }
  auto declared = definition_.events.find(event);
  if (declared == definition_.events.end() || !declared->second.can_subscribe) {
    conn->subscribe(std::move(event));
    co_return;
  }
  auto owner = host_.hold();
  auto work = track(WorkKind::kAction);
  auto allowed = std::make_shared<bool>(false);
  auto rule_op = host_.run_hook(
      "canSubscribe", ask_rule(declared->second.can_subscribe, host_.hooks_target(), conn, allowed),
      definition_.options.action_timeout);
  auto ran = co_await std::move(rule_op);
  if (conn->ending || conn->closed()) {
    co_return;
  }
  if (ran && *allowed) {
    conn->subscribe(std::move(event));
    co_return;
  }
  if (!ran) {
    log::info("canSubscribe of event '{}' failed actor_id={} conn_id={}: {}", event, actor_id_,
              conn->id(), ran.error().message);
  }
  const Error refusal = ran ? forbidden() : sanitize_for_client(ran.error());
  auto end_op = end(std::move(conn), 1011, refusal.qualified_code());
  co_await std::move(end_op);
}

Task<bool> ConnectionLifecycle::socket_closed(std::string conn_id,
                                              std::uint16_t code,
                                              std::string reason) {
  auto owner = host_.hold();
  auto conn = conns_.find(conn_id);
  if (!conn) {
    co_return false;
  }
  auto op = end(std::move(conn), code, std::move(reason));
  co_await std::move(op);
  co_return true;
}

// ---- raw WebSockets -----------------------------------------------------------------------------

Task<Result<void>> ConnectionLifecycle::attach_raw(std::shared_ptr<Connection> conn,
                                                   bool restored) {
  auto owner = host_.hold();
  const auto& hooks = definition_.hooks;
  conn->raw_socket = std::make_shared<WebSocket::Impl>(owner, conn, conn->request());
  conn->raw_socket->restored = restored;
  if (!hooks.on_websocket) {
    co_return fail(route_not_found("/websocket" + conn->request().path));
  }
  auto work = track(WorkKind::kWsCallback);
  auto task = hooks.on_websocket(host_.hooks_target(), conn.get(), WebSocket(conn->raw_socket));
  co_return co_await guarded("onWebSocket", actor_id_, std::move(task));
}

Task<ConnectionLifecycle::Delivery> ConnectionLifecycle::deliver_raw(std::string conn_id,
                                                                     net::WsMessage message) {
  auto owner = host_.hold();
  if (!lifecycle_.accepting()) {
    co_return Delivery::kRetry;
  }
  auto conn = conns_.find(conn_id);
  if (!conn || !conn->raw_socket) {
    co_return Delivery::kGone;
  }
  auto handler = conn->raw_socket->on_message;  // a copy: the handler may replace itself
  const std::size_t bytes = message.data.size();
  if (!handler) {
    host_.message_taken(*conn, bytes);
    co_return Delivery::kAccepted;
  }
  auto work = track(WorkKind::kWsCallback);
  std::optional<std::uint32_t> index;
  if (message.index) {
    index = *message.index;
  }
  auto task = handler(WebSocketMessage{message.binary, std::move(message.data), index});
  auto r = co_await guarded("websocket message", actor_id_, std::move(task));
  if (!r) {
    conn->close(1011, r.error().qualified_code());
  }
  host_.message_taken(*conn, bytes);
  co_return Delivery::kAccepted;
}

// ---- hibernated connections ---------------------------------------------------------------------

void ConnectionLifecycle::restore(const std::vector<storage::PersistedConn>& records,
                                  ActorDriver* driver) {
  for (const auto& record : records) {
    auto socket = driver != nullptr ? driver->hibernated_socket(record) : nullptr;
    // A socket that went away while the actor slept (or with the process): the connection is
    // restored without it, only for its on_disconnect (reap_stale).
    const bool stale = !socket;
    auto conn = conns_.restore(record, std::move(socket), definition_.hooks);
    if (!conn) {
      continue;  // unreadable: its record goes with the next write
    }
    conns_.add(conn);
    if (stale) {
      conn->detach();
      stale_.push_back(conn);
    } else if (conn->kind() == ConnKind::kRawWebSocket) {
      util::spawn(
          strand_,
          [](ConnectionLifecycle* self, std::shared_ptr<void> owner,
             std::shared_ptr<Connection> c) -> Task<void> {
            auto op = self->attach_raw(std::move(c), true);
            co_await std::move(op);
            (void)owner;
          }(this, host_.hold(), conn),
          "restore raw websocket");
    }
  }
}

void ConnectionLifecycle::reap_stale() {
  if (stale_.empty()) {
    return;
  }
  // RivetKit's restore cleanup: each runs once, before any later work reaches the actor.
  util::spawn(
      strand_,
      [](ConnectionLifecycle* self, std::shared_ptr<void> owner,
         std::vector<std::shared_ptr<Connection>> stale) -> Task<void> {
        for (auto& conn : stale) {
          log::debug("hibernated connection gone while asleep actor_id={} conn_id={}",
                     self->actor_id_, conn->id());
          auto op = self->close(conn);
          co_await std::move(op);
        }
        (void)owner;
      }(this, host_.hold(), std::move(stale_)),
      "reap stale connections");
  stale_.clear();
}

}  // namespace rivetkit::core
