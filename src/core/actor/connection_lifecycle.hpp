#pragma once
// ConnectionLifecycle: how an actor's connections open and end, with the connection hooks in
// RivetKit's order (core-semantics.md §4).
//
// - open: on_before_connect and create_conn_state (the preamble: a failure leaves nothing behind
//   and no on_disconnect runs), then the connection joins the set and on_connect runs (a failure
//   takes it out again, still without on_disconnect).
// - end, from either side: a raw socket's close handler (awaited, so an async one keeps the actor
//   awake and a stopping actor waits for it), the transport's close, then close(): removal and
//   on_disconnect, exactly once per connection however often it is asked.
// - raw WebSockets: on_websocket when a socket opens or comes back from hibernation, then each
//   message through the handler it set, one at a time per socket.
// - restore: hibernated connections come back when the actor starts; one whose socket went away
//   while the actor slept is restored only for its on_disconnect, run right after the start
//   (reap_stale), before later work reaches the actor.
//
// Every hook is bounded by its ActorOptions timeout and counted as work (core/actor/sleep_gates).
// Connect sockets' messages (actions, subscriptions) are the instance's: they are actor work.
// Single strand; the Host is the instance.

#include "core/actor/connection_set.hpp"
#include "core/actor/lifecycle.hpp"
#include "core/actor/sleep_gates.hpp"
#include "core/driver.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rivetkit::core {

class ConnectionLifecycle {
 public:
  /// What a delivery to a connection achieved. kRetry: the actor is stopping and the message was
  /// not taken (deliver it to the next instance); kGone: the connection no longer exists here.
  enum class Delivery { kAccepted, kRetry, kGone };

  /// The owner's side.
  class Host {
   public:
    virtual ~Host() = default;
    /// The actor the hooks receive.
    virtual detail::ActorApi* hooks_target() = 0;
    /// Keeps the owner (and this part) alive while a flow runs.
    virtual std::shared_ptr<void> hold() = 0;
    /// Runs a user hook within `limit` (actor.callback_timed_out).
    virtual Task<Result<void>> run_hook(const char* what,
                                        Task<void> task,
                                        std::chrono::milliseconds limit) = 0;
    /// A message of `conn` was taken (`bytes` of it): its index is due to be saved.
    virtual void message_taken(const Connection& conn, std::size_t bytes) = 0;
  };

  ConnectionLifecycle(boost::asio::any_io_executor strand,
                      std::string actor_id,
                      const detail::ActorDefinitionData& definition,
                      const Lifecycle& lifecycle,
                      SleepGates& sleep,
                      ConnectionSet& conns,
                      Host& host);
  ConnectionLifecycle(const ConnectionLifecycle&) = delete;
  ConnectionLifecycle& operator=(const ConnectionLifecycle&) = delete;

  /// Runs the preamble and, on success, adds the connection and runs on_connect. An error: a hook
  /// refused or failed. nullptr: the instance is stopping and no connection was added (the
  /// preamble may have run); the caller hands the open to the actor's next instance.
  Task<Result<std::shared_ptr<Connection>>> open(ConnKind kind,
                                                 Value params,
                                                 Request request,
                                                 protocol::client::Encoding encoding,
                                                 std::shared_ptr<net::WebSocket> transport);
  /// Removes the connection and runs on_disconnect (once, however many times it is called).
  Task<void> close(std::shared_ptr<Connection> conn);
  /// Ends a connection from the actor's side or the client's: the raw socket's close handler,
  /// the transport close with `code` and `reason`, then close().
  Task<void> end(std::shared_ptr<Connection> conn, std::uint16_t code, std::string reason);
  /// The socket of `conn_id` ended: end() it. False when there is no such connection.
  Task<bool> socket_closed(std::string conn_id, std::uint16_t code, std::string reason);

  /// A connect socket's subscription request (core-semantics.md §4). Unsubscribing, and
  /// subscribing to an event without a can_subscribe rule (declared or not), apply before the
  /// first suspension. An event with a rule asks it first (counted as work, bounded by the
  /// action timeout); a refusal ends the connection with 1011 and the error's group.code
  /// (`auth.forbidden` when the rule said false), as RivetKit does. The socket's next message
  /// waits for this (the caller awaits it), so a call after a subscription sees it applied.
  Task<void> subscription(std::shared_ptr<Connection> conn, std::string event, bool subscribe);

  /// Runs on_websocket for a newly opened (or restored) raw socket.
  Task<Result<void>> attach_raw(std::shared_ptr<Connection> conn, bool restored);
  /// Runs a raw socket's message handler for one message.
  Task<Delivery> deliver_raw(std::string conn_id, net::WsMessage message);

  /// Brings back the hibernated connections of a starting actor, on the sockets the driver kept.
  void restore(const std::vector<storage::PersistedConn>& records, ActorDriver* driver);
  /// Runs on_disconnect for the restored connections whose socket went away while the actor
  /// slept (spawned; call once the actor has started).
  void reap_stale();

 private:
  SleepGates::Work track(WorkKind kind) { return sleep_.track(kind, host_.hold()); }

  boost::asio::any_io_executor strand_;
  std::string actor_id_;
  const detail::ActorDefinitionData& definition_;
  const Lifecycle& lifecycle_;
  SleepGates& sleep_;
  ConnectionSet& conns_;
  Host& host_;
  /// Restored connections whose socket did not survive the sleep (see reap_stale).
  std::vector<std::shared_ptr<Connection>> stale_;
};

}  // namespace rivetkit::core
