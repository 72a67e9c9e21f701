#include "core/actor/connection_set.hpp"

#include "core/actor/stored_value.hpp"
#include "core/raw_websocket.hpp"
#include "util/log.hpp"
#include "util/metrics.hpp"

#include <algorithm>
#include <optional>

namespace rivetkit::core {

namespace client = protocol::client;

namespace {

// Replaces any record of the same connection (the newest one wins).
void put_record(std::vector<storage::PersistedConn>& records, storage::PersistedConn record) {
  std::erase_if(records, [&](const auto& r) { return r.conn_id == record.conn_id; });
  records.push_back(std::move(record));
}

}  // namespace

ConnectionSet::ConnectionSet(std::string actor_id,
                             std::size_t max_outgoing_message_size,
                             Host& host,
                             std::string_view actor_name)
    : actor_id_(std::move(actor_id)),
      max_outgoing_(max_outgoing_message_size),
      host_(host),
      open_gauge_(metrics::runtime().connections.with({actor_name})),
      opened_(metrics::runtime().connections_opened.with({actor_name})) {}

ConnectionSet::~ConnectionSet() {
  open_gauge_.sub(static_cast<std::int64_t>(live_.size()));
}

// ---- members ------------------------------------------------------------------------------------

std::shared_ptr<Connection> ConnectionSet::make(std::string id,
                                                ConnKind kind,
                                                Value params,
                                                Request request,
                                                client::Encoding encoding,
                                                std::shared_ptr<net::WebSocket> transport) {
  return std::make_shared<Connection>(*this, std::move(id), kind, std::move(params),
                                      std::move(request), encoding, std::move(transport));
}

void ConnectionSet::add(std::shared_ptr<Connection> conn) {
  auto id = conn->id();
  auto [it, inserted] = live_.insert_or_assign(std::move(id), std::move(conn));
  if (inserted) {
    open_gauge_.add();
    opened_.inc();
  }
  host_.members_changed();
}

void ConnectionSet::discard(const std::string& conn_id) {
  const auto erased = live_.erase(conn_id);
  open_gauge_.sub(static_cast<std::int64_t>(erased));
  if (erased != 0) {
    host_.members_changed();
  }
}

bool ConnectionSet::remove(const std::shared_ptr<Connection>& conn) {
  auto it = live_.find(conn->id());
  if (it == live_.end() || it->second != conn) {
    return false;
  }
  live_.erase(it);
  open_gauge_.sub();
  host_.members_changed();
  if (!conn->flushed()) {
    draining_.push_back(conn);  // its last frames leave once durable (release)
  }
  if (conn->is_hibernatable()) {
    std::erase_if(upserts_, [&](const auto& r) { return r.conn_id == conn->id(); });
    deletes_.push_back(conn->id());
    host_.connections_changed();
  }
  return true;
}

std::shared_ptr<Connection> ConnectionSet::find(std::string_view conn_id) const {
  auto it = live_.find(conn_id);
  return it == live_.end() ? nullptr : it->second;
}

bool ConnectionSet::keep_awake() const {
  return std::any_of(live_.begin(), live_.end(),
                     [](const auto& entry) { return !entry.second->is_hibernatable(); });
}

std::vector<std::shared_ptr<Connection>> ConnectionSet::ended_by_stop(bool destroying) const {
  std::vector<std::shared_ptr<Connection>> out;
  for (const auto& [id, conn] : live_) {
    if (conn->kind() == ConnKind::kHttp || conn->kind() == ConnKind::kRawRequest) {
      continue;
    }
    if (destroying || !conn->is_hibernatable()) {
      out.push_back(conn);
    }
  }
  return out;
}

void ConnectionSet::clear() {
  for (auto& [id, conn] : live_) {
    if (conn->kind() == ConnKind::kActorConnect || conn->kind() == ConnKind::kRawWebSocket) {
      conn->detach();
    }
    if (conn->raw_socket) {
      // Handlers usually capture their WebSocket handle; dropping them breaks that cycle.
      conn->raw_socket->on_message = nullptr;
      conn->raw_socket->on_close = nullptr;
    }
  }
  open_gauge_.sub(static_cast<std::int64_t>(live_.size()));
  live_.clear();
  draining_.clear();  // released by the final write, or dropped with a failed one
}

// ---- records ------------------------------------------------------------------------------------

void ConnectionSet::mark_dirty(const std::string& conn_id) {
  auto conn = find(conn_id);
  if (!conn || !conn->is_hibernatable()) {
    return;
  }
  put_record(upserts_, record_of(*conn));
  host_.connections_changed();
}

void ConnectionSet::add_records(const std::vector<std::string>& conn_ids,
                                storage::ActorWrite& write) const {
  for (const auto& id : conn_ids) {
    auto conn = find(id);
    if (!conn || !conn->is_hibernatable() || !conn->transport()) {
      continue;
    }
    put_record(write.conn_upserts, record_of(*conn));
  }
}

void ConnectionSet::take_changes(storage::ActorWrite& write) {
  for (auto& record : upserts_) {
    put_record(write.conn_upserts, std::move(record));
  }
  upserts_.clear();
  for (auto& id : deletes_) {
    write.conn_deletes.push_back(std::move(id));
  }
  deletes_.clear();
}

void ConnectionSet::save_hibernating() {
  for (const auto& [id, conn] : live_) {
    if (conn->is_hibernatable() && conn->transport()) {
      put_record(upserts_, record_of(*conn));
    }
  }
}

storage::PersistedConn ConnectionSet::record_of(const Connection& conn) const {
  storage::PersistedConn p;
  p.conn_id = conn.id();
  p.kind = conn.kind() == ConnKind::kRawWebSocket ? "websocket" : "connect";
  p.encoding = std::string(client::encoding_name(conn.encoding()));
  p.params = encode_stored(conn.params());
  Value state;
  if (auto* data = const_cast<Connection&>(conn).user_data(); data != nullptr) {
    try {
      state = data->state_to_value();
    } catch (const std::exception& e) {
      log::warn("connection state not serializable actor_id={}: {}", actor_id_, e.what());
    }
  }
  p.state = encode_stored(state);
  for (const auto& s : conn.subscriptions()) {
    p.subscriptions.push_back(s);
  }
  p.request_path = conn.request().path + conn.request().search;
  Value headers{Object{}};
  for (const auto& h : conn.request().headers) {
    headers.set(h.name, h.value);
  }
  p.request_headers = encode_stored(headers);
  if (auto transport = conn.transport()) {
    if (auto point = transport->resume_point()) {
      p.tunnel_id = std::move(point->tunnel_id);
      p.client_message_index = point->last_received;
      p.server_message_index = point->next_sent;
    }
  }
  return p;
}

std::shared_ptr<Connection> ConnectionSet::restore(const storage::PersistedConn& record,
                                                   std::shared_ptr<net::WebSocket> socket,
                                                   const detail::ActorHooks& hooks) {
  auto params = decode_stored(record.params);
  auto state = decode_stored(record.state);
  auto encoding = client::parse_encoding(record.encoding);
  if (!params || !state || !encoding) {
    log::warn("dropping unreadable hibernated connection actor_id={} conn_id={}", actor_id_,
              record.conn_id);
    deletes_.push_back(record.conn_id);
    host_.connections_changed();
    return nullptr;
  }
  Request request;
  auto split = record.request_path.find('?');
  request.method = "GET";
  request.path = record.request_path.substr(0, split);
  request.search = split == std::string::npos ? "" : record.request_path.substr(split);
  if (auto headers = decode_stored(record.request_headers); headers && headers->is_object()) {
    for (const auto& m : headers->as_object()) {
      if (m.value.is_string()) {
        request.headers.push_back(HttpHeader{m.key, m.value.as_string()});
      }
    }
  }
  const bool raw = record.kind == "websocket";
  auto conn = make(record.conn_id, raw ? ConnKind::kRawWebSocket : ConnKind::kActorConnect, *params,
                   std::move(request), *encoding, std::move(socket));
  conn->set_hibernatable(true);
  try {
    conn->set_user_data(hooks.restore_conn_data(*params, *state));
  } catch (const std::exception& e) {
    log::warn("dropping hibernated connection actor_id={} conn_id={}: {}", actor_id_,
              record.conn_id, e.what());
    deletes_.push_back(record.conn_id);
    host_.connections_changed();
    return nullptr;
  }
  for (const auto& sub : record.subscriptions) {
    conn->subscribe(sub);
  }
  // subscribe() marked it dirty, but it is not a member yet: nothing to rewrite.
  return conn;
}

// ---- outputs ------------------------------------------------------------------------------------

void ConnectionSet::send_frame(Connection& conn, net::WsMessage frame) {
  const std::uint64_t seq = host_.output_seq();
  conn.enqueue(std::move(frame), seq);
}

void ConnectionSet::send_message(Connection& conn, const client::ToClient& msg) {
  send_frame(conn, net::WsMessage{!client::is_text(conn.encoding()),
                                  client::encode_to_client(conn.encoding(), msg)});
}

void ConnectionSet::send_event(Connection& conn, const std::string& name, const Array& args) {
  if (conn.kind() != ConnKind::kActorConnect || conn.closed()) {
    return;
  }
  net::WsMessage frame{
      !client::is_text(conn.encoding()),
      client::encode_to_client(conn.encoding(), client::ToClient{client::Event{name, args}})};
  if (frame.data.size() > max_outgoing_) {
    conn.close(1011, "message.outgoing_too_long");
    return;
  }
  send_frame(conn, std::move(frame));
}

void ConnectionSet::broadcast(const std::string& event, const Array& args) {
  std::optional<net::WsMessage> frames[3];  // one per encoding in use
  const std::uint64_t seq = host_.output_seq();
  std::vector<std::shared_ptr<Connection>> too_long;
  for (auto& [id, conn] : live_) {
    if (conn->kind() != ConnKind::kActorConnect || conn->closed() || !conn->subscribed(event)) {
      continue;
    }
    auto& frame = frames[static_cast<int>(conn->encoding())];
    if (!frame) {
      frame = net::WsMessage{
          !client::is_text(conn->encoding()),
          client::encode_to_client(conn->encoding(), client::ToClient{client::Event{event, args}})};
    }
    if (frame->data.size() > max_outgoing_) {
      too_long.push_back(conn);
      continue;
    }
    conn->enqueue(*frame, seq);
  }
  for (auto& conn : too_long) {
    conn->close(1011, "message.outgoing_too_long");
  }
}

void ConnectionSet::release(std::uint64_t durable, std::uint64_t failed) {
  auto progress = [&](Connection& conn) {
    conn.release(durable);
    if (failed != 0) {
      conn.fail_pending(failed);
    }
  };
  for (auto& [id, conn] : live_) {
    progress(*conn);
  }
  for (auto& conn : draining_) {
    progress(*conn);
  }
  std::erase_if(draining_, [](const auto& conn) { return conn->flushed(); });
}

}  // namespace rivetkit::core
