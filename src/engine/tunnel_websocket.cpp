#include "engine/tunnel_websocket.hpp"

#include "util/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace rivetkit::engine {

namespace asio = boost::asio;

namespace {

// Well inside the gateway's 30 s: a taken message whose index no save covered by then (the
// connection was not hibernatable after all, or the actor is stuck saving) is acknowledged
// anyway rather than have the gateway drop the client.
constexpr auto kAckFallback = std::chrono::seconds(10);
// At most one acknowledgement per socket this often (RivetKit acknowledges within 5 s)...
constexpr auto kAckInterval = std::chrono::seconds(1);
// ... unless this much inbound data waits (RivetKit's threshold for acknowledging at once), so
// the gateway's buffer for the client stays small.
constexpr std::size_t kAckBytes = 500'000;

// Wrapping u16 order (§4.11): a - b as a signed 16-bit distance.
int distance(envoy::MessageIndex a, envoy::MessageIndex b) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(a - b));
}

std::string bytes_of(const std::array<std::uint8_t, 4>& id) {
  return std::string(id.begin(), id.end());
}

}  // namespace

TunnelWebSocket::TunnelWebSocket(std::shared_ptr<EnvoyLink> link,
                                 envoy::GatewayId gateway_id,
                                 envoy::RequestId request_id,
                                 bool can_hibernate)
    : link_(std::move(link)),
      gateway_id_(gateway_id),
      request_id_(request_id),
      can_hibernate_(can_hibernate),
      ack_fallback_(link_->strand()),
      ack_timer_(link_->strand()),
      wake_(link_->strand()) {}

std::shared_ptr<TunnelWebSocket> TunnelWebSocket::restored(std::shared_ptr<EnvoyLink> link,
                                                           envoy::GatewayId gateway_id,
                                                           envoy::RequestId request_id,
                                                           envoy::MessageIndex last_received,
                                                           envoy::MessageIndex next_sent) {
  auto ws = std::make_shared<TunnelWebSocket>(std::move(link), gateway_id, request_id, true);
  ws->restored_ = true;
  ws->last_in_ = last_received;
  ws->taken_ = last_received;
  ws->acked_ = last_received;
  ws->acked_mirror_ = last_received;
  ws->ack_sent_ = last_received;
  ws->out_index_ = next_sent;
  return ws;
}

envoy::MessageId TunnelWebSocket::next_id() {
  return envoy::MessageId{gateway_id_, request_id_, out_index_++};
}

std::optional<net::WsResumePoint> TunnelWebSocket::resume_point() const {
  if (!can_hibernate_) {
    return std::nullopt;
  }
  return net::WsResumePoint{bytes_of(gateway_id_) + bytes_of(request_id_), taken_.load(),
                            out_index_.load()};
}

std::optional<std::uint16_t> TunnelWebSocket::acked_index() const {
  const auto v = acked_mirror_.load();
  if (v < 0) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(v);
}

void TunnelWebSocket::open() {
  link_->send(envoy::ToRivet{
      envoy::ToRivetTunnelMessage{next_id(), envoy::ToRivetWebSocketOpen{can_hibernate_}}});
  opened_ = true;
  for (auto& msg : unsent_) {
    link_->send(envoy::ToRivet{envoy::ToRivetTunnelMessage{
        next_id(), envoy::ToRivetWebSocketMessage{std::move(msg.data), msg.binary}}});
  }
  unsent_.clear();
}

void TunnelWebSocket::send(net::WsMessage msg) {
  asio::post(link_->strand(), [self = shared_from_this(), msg = std::move(msg)]() mutable {
    if (self->closed_) {
      return;
    }
    if (!self->opened_) {
      self->unsent_.push_back(std::move(msg));
      return;
    }
    self->link_->send(envoy::ToRivet{envoy::ToRivetTunnelMessage{
        self->next_id(), envoy::ToRivetWebSocketMessage{std::move(msg.data), msg.binary}}});
  });
}

void TunnelWebSocket::close(std::uint16_t code, std::string reason) {
  asio::post(link_->strand(),
             [self = shared_from_this(), code, reason = std::move(reason)]() mutable {
               if (self->closed_) {
                 return;
               }
               self->link_->send(envoy::ToRivet{envoy::ToRivetTunnelMessage{
                   self->next_id(), envoy::ToRivetWebSocketClose{code, reason, false}}});
               self->finish(code, std::move(reason));
             });
}

void TunnelWebSocket::finish(std::uint16_t code, std::string reason) {
  closed_ = true;
  close_info_ = net::WsCloseInfo{code, std::move(reason)};
  wake_.cancel();
  ack_fallback_.cancel();
  ack_timer_.cancel();
  unacked_since_.reset();
}

void TunnelWebSocket::on_message(envoy::MessageIndex index, net::WsMessage msg) {
  if (closed_) {
    return;
  }
  if (last_in_) {
    const int d = distance(index, *last_in_);
    if (d <= 0) {
      return;  // a re-send of a message already taken (the gateway re-sends after a wake)
    }
    if (d > 1 && restored_) {
      // Messages between the record and this one are gone: the session cannot continue.
      log::warn("hibernated socket resumed with a gap (expected index {}, got {}); closing",
                static_cast<unsigned>(static_cast<envoy::MessageIndex>(*last_in_ + 1)),
                static_cast<unsigned>(index));
      link_->send(envoy::ToRivet{envoy::ToRivetTunnelMessage{
          next_id(), envoy::ToRivetWebSocketClose{1008, "ws.message_index_skip", false}}});
      finish(1008, "ws.message_index_skip");
      return;
    }
  }
  last_in_ = index;
  bytes_since_ack_ += msg.data.size();
  inbox_.emplace_back(index, std::move(msg));
  wake_.cancel();
}

void TunnelWebSocket::on_remote_close(std::uint16_t code, std::string reason) {
  if (!closed_) {
    finish(code, std::move(reason));
  }
}

void TunnelWebSocket::ack_durable(envoy::MessageIndex index) {
  if (closed_ || !can_hibernate_) {
    return;
  }
  if (acked_ && distance(index, *acked_) <= 0) {
    return;
  }
  acked_ = index;
  acked_mirror_ = index;
  if (distance(taken_.load(), index) <= 0) {
    unacked_since_.reset();
  }
  send_ack_soon();
}

void TunnelWebSocket::send_ack_soon() {
  const auto now = asio::steady_timer::clock_type::now();
  if (!ack_sent_at_ || now - *ack_sent_at_ >= kAckInterval || bytes_since_ack_ >= kAckBytes) {
    send_ack();
    return;
  }
  if (ack_timer_armed_) {
    return;  // the armed timer sends the latest durable index
  }
  ack_timer_armed_ = true;
  ack_timer_.expires_at(*ack_sent_at_ + kAckInterval);
  ack_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    self->ack_timer_armed_ = false;
    if (!ec && !self->closed_) {
      self->send_ack();
    }
  });
}

void TunnelWebSocket::send_ack() {
  if (!acked_ || (ack_sent_ && distance(*acked_, *ack_sent_) <= 0)) {
    return;
  }
  ack_sent_ = acked_;
  ack_sent_at_ = asio::steady_timer::clock_type::now();
  bytes_since_ack_ = 0;
  link_->send(envoy::ToRivet{
      envoy::ToRivetTunnelMessage{next_id(), envoy::ToRivetWebSocketMessageAck{*acked_}}});
}

void TunnelWebSocket::arm_ack_fallback() {
  if (!unacked_since_) {
    unacked_since_ = asio::steady_timer::clock_type::now();
  }
  if (ack_fallback_armed_) {
    return;
  }
  ack_fallback_armed_ = true;
  ack_fallback_.expires_at(*unacked_since_ + kAckFallback);
  ack_fallback_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    self->ack_fallback_armed_ = false;
    if (ec || self->closed_ || !self->unacked_since_) {
      return;
    }
    if (asio::steady_timer::clock_type::now() < *self->unacked_since_ + kAckFallback) {
      self->arm_ack_fallback();  // the oldest unacknowledged message is younger: wait for it
      return;
    }
    const auto taken = self->taken_.load();
    log::warn("websocket message {} was not saved within {} s; acknowledging it anyway",
              static_cast<unsigned>(taken),
              std::chrono::duration_cast<std::chrono::seconds>(kAckFallback).count());
    self->ack_durable(taken);
  });
}

net::WsCloseInfo TunnelWebSocket::close_info() const {
  return close_info_;
}

Task<std::optional<net::WsMessage>> TunnelWebSocket::receive() {
  auto task = [](std::shared_ptr<TunnelWebSocket> self) -> Task<std::optional<net::WsMessage>> {
    while (self->inbox_.empty() && !self->closed_) {
      self->wake_.expires_at(asio::steady_timer::time_point::max());
      co_await self->wake_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (self->inbox_.empty()) {
      co_return std::nullopt;
    }
    auto [index, msg] = std::move(self->inbox_.front());
    self->inbox_.pop_front();
    if (self->can_hibernate_) {
      // Taken by the session; acknowledged once the actor saved this index (ack_durable).
      self->taken_ = index;
      self->arm_ack_fallback();
      msg.index = index;
    }
    co_return std::move(msg);
  };
  auto op = asio::co_spawn(link_->strand(), task(shared_from_this()), asio::use_awaitable);
  co_return co_await std::move(op);
}

}  // namespace rivetkit::engine
