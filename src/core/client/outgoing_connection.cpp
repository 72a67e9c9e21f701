#include "core/client/outgoing_connection.hpp"

#include "util/log.hpp"
#include "util/spawn.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace rivetkit::core {

namespace asio = boost::asio;
namespace client = protocol::client;
using namespace boost::asio::experimental::awaitable_operators;

// One answer awaited on the strand (Init, an action's response, the end). Several coroutines may
// wait on one (every dispose() waits for the end).
struct OutgoingConnection::Waiter {
  explicit Waiter(const asio::any_io_executor& strand)
      : event(strand, asio::steady_timer::time_point::max()) {}
  asio::steady_timer event;  // an event, not a clock: cancelled when done
  bool done = false;
  std::optional<Result<Value>> result;

  void complete(Result<Value> r) {
    if (done) {
      return;
    }
    done = true;
    result = std::move(r);
    event.cancel();
  }
  Task<void> wait() {
    if (!done) {
      co_await event.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }
};

namespace {

Error connection_closed(std::string message) {
  return Error{"actor", "connection_closed", std::move(message), std::nullopt, true};
}

}  // namespace

OutgoingConnection::OutgoingConnection(std::shared_ptr<net::WebSocket> socket,
                                       client::Encoding encoding,
                                       asio::any_io_executor strand)
    : socket_(std::move(socket)), encoding_(encoding), strand_(std::move(strand)) {}

Task<Result<std::shared_ptr<OutgoingConnection>>> OutgoingConnection::open(
    std::shared_ptr<net::WebSocket> socket,
    client::Encoding encoding,
    asio::any_io_executor strand,
    std::shared_ptr<util::Clock> clock,
    std::chrono::milliseconds init_timeout) {
  auto task =
      [](std::shared_ptr<OutgoingConnection> self, std::shared_ptr<util::Clock> c,
         std::chrono::milliseconds limit) -> Task<Result<std::shared_ptr<OutgoingConnection>>> {
    self->init_ = std::make_shared<Waiter>(self->strand_);
    auto init = self->init_;
    util::spawn(self->strand_, self->read_loop(), "outgoing connection");
    auto answered_op = init->wait();
    auto deadline_op = c->wait_for(limit);
    co_await (std::move(answered_op) || std::move(deadline_op));
    if (self->initialized_) {
      co_return self;
    }
    std::optional<Error> error;
    if (init->done && init->result && !*init->result) {
      error = init->result->error();
    }
    self->close();
    co_return fail(
        error.value_or(connection_closed("The actor did not accept the connection in time")));
  };
  auto self = std::make_shared<OutgoingConnection>(std::move(socket), encoding, strand);
  auto op = asio::co_spawn(strand, task(std::move(self), std::move(clock), init_timeout),
                           asio::use_awaitable);
  co_return co_await std::move(op);
}

Task<void> OutgoingConnection::read_loop() {
  auto self = shared_from_this();  // the connection lives while its socket does
  while (true) {
    auto receive_op = socket_->receive();
    auto msg = co_await std::move(receive_op);
    if (!msg) {
      break;
    }
    auto decoded = client::decode_to_client(encoding_, msg->data);
    if (!decoded) {
      // As the TS client: a frame it cannot read is dropped with a log line.
      log::warn("undecodable frame from actor {} on connection {}: {}", actor_id_, connection_id_,
                decoded.error().message);
      continue;
    }
    on_frame(std::move(*decoded));
  }
  ended();
}

void OutgoingConnection::on_frame(client::ToClient message) {
  if (auto* init = std::get_if<client::Init>(&message)) {
    actor_id_ = std::move(init->actor_id);
    connection_id_ = std::move(init->connection_id);
    initialized_ = true;
    if (init_) {
      init_->complete(Value{});
      init_.reset();
    }
  } else if (auto* response = std::get_if<client::ActionResponse>(&message)) {
    auto it = actions_.find(response->id);
    if (it != actions_.end()) {
      it->second->complete(std::move(response->output));
      actions_.erase(it);
    }
  } else if (auto* error = std::get_if<client::ErrorMessage>(&message)) {
    Error e{std::move(error->group), std::move(error->code), std::move(error->message),
            std::move(error->metadata), true};
    if (error->action_id) {
      auto it = actions_.find(*error->action_id);
      if (it != actions_.end()) {
        it->second->complete(fail(std::move(e)));
        actions_.erase(it);
      }
    } else {
      // The connection is refused or ends; the close follows.
      if (init_) {
        init_->complete(fail(e));
      }
      close_error_ = std::move(e);
    }
  } else {
    auto& event = std::get<client::Event>(message);
    std::vector<std::function<void(const Array&)>> called;
    for (const auto& [id, listener] : listeners_) {
      if (listener.event == event.name) {
        called.push_back(listener.fn);
      }
    }
    for (const auto& fn : called) {
      try {
        fn(event.args);
      } catch (const std::exception& e) {
        log::warn("event listener of '{}' failed: {}", event.name, e.what());
      } catch (...) {
        log::warn("event listener of '{}' failed", event.name);
      }
    }
  }
}

void OutgoingConnection::ended() {
  closed_ = true;
  const Error error = closed_error();
  if (init_) {
    init_->complete(fail(error));
    init_.reset();
  }
  auto actions = std::move(actions_);
  actions_.clear();
  for (auto& [id, waiter] : actions) {
    waiter->complete(fail(error));
  }
  if (end_) {
    end_->complete(Value{});
  }
}

Error OutgoingConnection::closed_error() const {
  if (close_error_) {
    return *close_error_;
  }
  // The actor's (or the engine's) close reason is "<group>.<code>[#<ray id>]" for an error.
  const auto info = socket_->close_info();
  if (info.code == 1011 || info.code == 1003) {
    std::string reason = info.reason.substr(0, info.reason.find('#'));
    const auto dot = reason.find('.');
    if (dot != std::string::npos && dot > 0 && dot + 1 < reason.size()) {
      return Error{reason.substr(0, dot), reason.substr(dot + 1),
                   "The actor closed the connection: " + info.reason, std::nullopt, true};
    }
  }
  return connection_closed("The connection to the actor is closed (" + std::to_string(info.code)
                           + (info.reason.empty() ? "" : " " + info.reason) + ")");
}

void OutgoingConnection::send(const client::ToServer& message) {
  socket_->send(
      net::WsMessage{!client::is_text(encoding_), client::encode_to_server(encoding_, message)});
}

Task<Value> OutgoingConnection::call(std::string action, Array args) {
  auto task = [](std::shared_ptr<OutgoingConnection> self, std::string name,
                 Array arguments) -> Task<Result<Value>> {
    if (self->closed_) {
      co_return fail(self->closed_error());
    }
    const std::uint64_t id = self->next_action_++;
    auto waiter = std::make_shared<Waiter>(self->strand_);
    self->actions_[id] = waiter;
    self->send(client::ToServer{client::ActionRequest{id, std::move(name), std::move(arguments)}});
    auto wait_op = waiter->wait();
    co_await std::move(wait_op);
    if (!waiter->done) {
      self->actions_.erase(id);  // the caller gave up (cancelled)
      co_return fail(connection_closed("The call was cancelled"));
    }
    co_return std::move(*waiter->result);
  };
  auto op = asio::co_spawn(strand_, task(shared_from_this(), std::move(action), std::move(args)),
                           asio::use_awaitable);
  auto result = co_await std::move(op);
  if (!result) {
    throw ActorError(std::move(result.error()));
  }
  co_return std::move(*result);
}

std::uint64_t OutgoingConnection::on(std::string event,
                                     std::function<void(const Array&)> listener) {
  const std::uint64_t id = next_listener_++;
  if (subscribed_[event]++ == 0 && !closed_) {
    send(client::ToServer{client::SubscriptionRequest{event, true}});
  }
  listeners_[id] = Listener{std::move(event), std::move(listener)};
  return id;
}

void OutgoingConnection::off(std::uint64_t listener) {
  auto it = listeners_.find(listener);
  if (it == listeners_.end()) {
    return;
  }
  auto count = subscribed_.find(it->second.event);
  if (count != subscribed_.end() && --count->second == 0) {
    if (!closed_) {
      send(client::ToServer{client::SubscriptionRequest{it->second.event, false}});
    }
    subscribed_.erase(count);
  }
  listeners_.erase(it);
}

Task<void> OutgoingConnection::dispose() {
  auto task = [](std::shared_ptr<OutgoingConnection> self) -> Task<void> {
    if (self->closed_) {
      co_return;
    }
    if (!self->end_) {
      self->end_ = std::make_shared<Waiter>(self->strand_);
    }
    auto end = self->end_;
    self->socket_->close(1000, "Disposed");
    auto wait_op = end->wait();
    co_await std::move(wait_op);
  };
  auto op = asio::co_spawn(strand_, task(shared_from_this()), asio::use_awaitable);
  co_await std::move(op);
}

void OutgoingConnection::close() {
  if (!closed_) {
    socket_->close(1000, "Disposed");
  }
}

}  // namespace rivetkit::core
