#include "core/connection.hpp"

#include "core/actor/connection_set.hpp"

namespace rivetkit::core {

Connection::Connection(ConnectionSet& owner,
                       std::string id,
                       ConnKind kind,
                       Value params,
                       Request request,
                       protocol::client::Encoding encoding,
                       std::shared_ptr<net::WebSocket> transport)
    : owner_(owner),
      id_(std::move(id)),
      kind_(kind),
      params_(std::move(params)),
      request_(std::move(request)),
      encoding_(encoding),
      transport_(std::move(transport)) {}

void Connection::send(std::string event, Array args) {
  owner_.send_event(*this, event, args);
}

std::optional<std::uint16_t> Connection::received_index() const {
  auto point = transport_ ? transport_->resume_point() : std::nullopt;
  return point ? std::optional<std::uint16_t>(point->last_received) : std::nullopt;
}

void Connection::send_frame(net::WsMessage frame) {
  owner_.send_frame(*this, std::move(frame));
}

void Connection::mark_state_dirty() {
  if (hibernatable_) {
    owner_.mark_dirty(id_);
  }
}

void Connection::subscribe(std::string event) {
  subscriptions_.insert(std::move(event));
  mark_state_dirty();
}

void Connection::unsubscribe(const std::string& event) {
  subscriptions_.erase(event);
  mark_state_dirty();
}

void Connection::disconnect(std::string reason) {
  close(1000, std::move(reason));
}

void Connection::enqueue(net::WsMessage frame, std::uint64_t needs_seq) {
  if (closed_ || !transport_) {
    return;
  }
  outbox_.emplace_back(needs_seq, std::move(frame));
  release(owner_.durable_seq());
}

void Connection::release(std::uint64_t durable_seq) {
  while (!outbox_.empty() && outbox_.front().first <= durable_seq) {
    net::WsMessage msg = std::move(outbox_.front().second);
    outbox_.pop_front();
    transport_->send(std::move(msg));
  }
  if (outbox_.empty() && pending_close_) {
    auto [code, reason] = std::move(*pending_close_);
    pending_close_.reset();
    transport_->close(code, std::move(reason));
  }
}

void Connection::fail_pending(std::uint64_t failed_seq) {
  if (!outbox_.empty() && outbox_.front().first <= failed_seq) {
    outbox_.clear();
    pending_close_.reset();
    closed_ = true;
    transport_->close(1011, "actor.state_save_failed");
  }
}

void Connection::close(std::uint16_t code, std::string reason) {
  if (closed_) {
    return;
  }
  closed_ = true;
  if (!transport_) {
    return;
  }
  if (outbox_.empty()) {
    transport_->close(code, std::move(reason));
  } else {
    // Frames already produced still leave (once durable) before the close frame.
    pending_close_.emplace(code, std::move(reason));
  }
}

}  // namespace rivetkit::core
