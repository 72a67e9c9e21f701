#include "engine/tunnel_websocket.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace rivetkit::engine {

namespace asio = boost::asio;

TunnelWebSocket::TunnelWebSocket(std::shared_ptr<EnvoyLink> link,
                                 envoy::GatewayId gateway_id,
                                 envoy::RequestId request_id,
                                 bool can_hibernate)
    : link_(std::move(link)),
      gateway_id_(gateway_id),
      request_id_(request_id),
      can_hibernate_(can_hibernate),
      wake_(link_->strand()) {}

envoy::MessageId TunnelWebSocket::next_id() {
  return envoy::MessageId{gateway_id_, request_id_, out_index_++};
}

void TunnelWebSocket::open() {
  link_->send(envoy::ToRivet{
      envoy::ToRivetTunnelMessage{next_id(), envoy::ToRivetWebSocketOpen{can_hibernate_}}});
}

void TunnelWebSocket::send(net::WsMessage msg) {
  asio::post(link_->strand(), [self = shared_from_this(), msg = std::move(msg)]() mutable {
    if (self->closed_) {
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
}

void TunnelWebSocket::on_message(envoy::MessageIndex index, net::WsMessage msg) {
  if (closed_) {
    return;
  }
  // Wrapping comparison: a re-sent message (index <= last) is dropped (§4.11).
  if (last_in_ && static_cast<std::int16_t>(static_cast<std::uint16_t>(index - *last_in_)) <= 0) {
    return;
  }
  last_in_ = index;
  inbox_.emplace_back(index, std::move(msg));
  wake_.cancel();
}

void TunnelWebSocket::on_remote_close(std::uint16_t code, std::string reason) {
  if (!closed_) {
    finish(code, std::move(reason));
  }
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
      // Taken by the session: the gateway may drop its copy (acks are cumulative).
      self->link_->send(envoy::ToRivet{
          envoy::ToRivetTunnelMessage{self->next_id(), envoy::ToRivetWebSocketMessageAck{index}}});
    }
    co_return std::move(msg);
  };
  auto op = asio::co_spawn(link_->strand(), task(shared_from_this()), asio::use_awaitable);
  co_return co_await std::move(op);
}

}  // namespace rivetkit::engine
