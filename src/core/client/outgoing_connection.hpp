#pragma once
// OutgoingConnection: the client's side of the /connect protocol (client-protocol.md §6.8) for a
// connection one actor holds to another (include/rivetkit/actor_connection.hpp), over any
// net::WebSocket: an in-memory pipe to the actor router's /connect session (local mode) or a
// socket through the engine's gateway (engine mode).
//
// As the TS client does: actions carry ids from 0 and their answers are matched by id (they may
// come out of order); the first listener of an event subscribes and the last one to go
// unsubscribes; an Error frame with an action id fails that action, one without closes the
// connection. Unlike the TS client it does not reconnect: the connection ends when its socket
// does, and every action still waiting then fails with the close's error.
//
// All state lives on the holder's strand (the holding actor's): listeners run there, and the
// ActorConnApi functions must be called from there (the holder's code).

#include "net/websocket.hpp"
#include "protocol/client/messages.hpp"
#include "util/clock.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace rivetkit::core {

class OutgoingConnection final : public detail::ActorConnApi,
                                 public std::enable_shared_from_this<OutgoingConnection> {
 public:
  /// Speaks the protocol on `socket` from `strand` and resumes once the actor sent Init, or with
  /// the error it refused the connection with (its Error frame, or the close reason), or
  /// actor.connection_closed when no Init came within `init_timeout` on `clock`.
  static Task<Result<std::shared_ptr<OutgoingConnection>>> open(
      std::shared_ptr<net::WebSocket> socket,
      protocol::client::Encoding encoding,
      boost::asio::any_io_executor strand,
      std::shared_ptr<util::Clock> clock,
      std::chrono::milliseconds init_timeout);

  OutgoingConnection(std::shared_ptr<net::WebSocket> socket,
                     protocol::client::Encoding encoding,
                     boost::asio::any_io_executor strand);

  // detail::ActorConnApi
  const std::string& actor_id() const override { return actor_id_; }
  const std::string& connection_id() const override { return connection_id_; }
  Task<Value> call(std::string action, Array args) override;
  std::uint64_t on(std::string event, std::function<void(const Array&)> listener) override;
  void off(std::uint64_t listener) override;
  bool closed() const override { return closed_; }
  Task<void> dispose() override;

  /// Closes the socket (1000 "Disposed") without waiting; the holder stopped.
  void close();

 private:
  struct Waiter;
  Task<void> read_loop();
  void on_frame(protocol::client::ToClient message);
  void ended();
  void send(const protocol::client::ToServer& message);
  Error closed_error() const;

  std::shared_ptr<net::WebSocket> socket_;
  protocol::client::Encoding encoding_;
  boost::asio::any_io_executor strand_;
  std::string actor_id_;
  std::string connection_id_;
  bool initialized_ = false;
  bool closed_ = false;
  /// Why it ended: the actor's connection-level error or close reason.
  std::optional<Error> close_error_;
  std::shared_ptr<Waiter> init_;  // the open() waiting for Init
  std::shared_ptr<Waiter> end_;   // dispose()s waiting for the end
  std::uint64_t next_action_ = 0;
  std::map<std::uint64_t, std::shared_ptr<Waiter>> actions_;
  std::uint64_t next_listener_ = 1;
  struct Listener {
    std::string event;
    std::function<void(const Array&)> fn;
  };
  std::map<std::uint64_t, Listener> listeners_;
  std::map<std::string, std::size_t, std::less<>> subscribed_;  // event -> listeners
};

}  // namespace rivetkit::core
