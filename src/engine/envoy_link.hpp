#pragma once
// EnvoyLink: this process's connection to the Rivet Engine as an envoy (envoy-protocol.md §1,
// §4.2, §4.3, §4.8). It owns the WebSocket and everything that must survive a reconnect:
//
// - connect (TCP_NODELAY), send ToRivetMetadata first, answer every ping from the reader at once;
// - reconnect with backoff min(1 s * 2^attempt, 30 s) * (1 + U[0, 0.25)) and the same envoy key;
//   never after an eviction ("ws.eviction" close);
// - commands: acknowledged as soon as they arrive, replays (index <= the last one processed for
//   that actor generation) dropped before they reach the handler;
// - events: numbered per actor generation from 0, kept until the engine acknowledges them or the
//   generation ends, all re-sent after every ToEnvoyInit;
// - KV requests: matched to responses by id, re-sent after a reconnect, failed when the engine is
//   lost for good (the lost timer) or the link stops;
// - tunnel messages sent while disconnected are queued and flushed after ToEnvoyInit.
//
// Threading: all state lives on one strand (strand()). Public functions are thread-safe; handler
// callbacks run on that strand and must not block.

#include "engine/engine_kv.hpp"
#include "net/websocket.hpp"
#include "protocol/envoy/messages.hpp"
#include "util/clock.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::engine {

namespace envoy = protocol::envoy;

struct EnvoyLinkOptions {
  std::string endpoint;  // http(s)://host:port of the engine
  std::string namespace_name = "default";
  std::optional<std::string> token;
  std::string pool = "default";
  std::string envoy_key;  // stable for the life of the process
  std::uint32_t version = 1;
  std::vector<std::string> actor_names;
  /// How long a KV request may wait for its answer (including reconnects).
  std::chrono::milliseconds kv_timeout{30'000};
  /// Every wait of the link (reconnect backoff, the lost timer, KV and connect deadlines, how
  /// long finished generations are kept) is on this clock; null: the system clock.
  std::shared_ptr<util::Clock> clock;
};

class EnvoyLinkHandler {
 public:
  virtual ~EnvoyLinkHandler() = default;
  /// New (not replayed) commands, in order.
  virtual void on_commands(std::vector<envoy::CommandWrapper> commands) = 0;
  virtual void on_tunnel(envoy::ToEnvoyTunnelMessage message) = 0;
  /// The engine was unreachable for longer than its lost threshold: it has given up on the
  /// actors here and will start them elsewhere. Stop them without reporting.
  virtual void on_lost() = 0;
  /// Another process took over this envoy key, or the engine drained this version: stop
  /// everything, do not reconnect.
  virtual void on_evicted() = 0;
};

class EnvoyLink : public EngineKv, public std::enable_shared_from_this<EnvoyLink> {
 public:
  EnvoyLink(boost::asio::any_io_executor ex, EnvoyLinkOptions options);

  const boost::asio::strand<boost::asio::any_io_executor>& strand() const { return strand_; }
  const EnvoyLinkOptions& options() const { return options_; }

  /// Starts connecting (and reconnecting) in the background. `handler` must outlive the link's
  /// use (until stop() and the loop's exit).
  void start(EnvoyLinkHandler* handler);
  /// Resumes once the first ToEnvoyInit arrived, or with an error after `timeout` (the error of
  /// the last connection attempt).
  Task<Result<void>> wait_connected(std::chrono::milliseconds timeout);
  /// Closes the socket with 1000 "envoy.shutdown" and stops reconnecting; pending KV requests
  /// fail.
  void stop();

  /// Commands that came another way than the socket (serverless: the `/start` request's body),
  /// handled as if the engine had sent them: acknowledged, recorded (so a replay over the socket
  /// is dropped) and handed to the handler. Thread-safe.
  void deliver_commands(envoy::ToEnvoyCommands commands);
  /// Sends (or queues until connected) one message. Thread-safe.
  void send(envoy::ToRivet message);
  /// Records an event of (actor, generation) with the next index and sends it. Thread-safe.
  void send_event(std::string actor_id, std::uint32_t generation, envoy::Event event);
  /// The generation ended: its history and command de-duplication entry go (after the next
  /// resend, if disconnected now). Thread-safe.
  void forget_generation(std::string actor_id, std::uint32_t generation);

  /// One KV request for an actor; resumes with the engine's answer (KvErrorResponse becomes an
  /// error) or an error when the link cannot deliver it.
  Task<Result<envoy::KvResponseData>> kv(std::string actor_id,
                                         envoy::KvRequestData request) override;

  /// The engine's limits from the last ToEnvoyInit (defaults before the first).
  envoy::ProtocolMetadata metadata() const;
  bool connected() const;

 private:
  struct PendingKv;
  using GenKey = std::pair<std::string, std::uint32_t>;
  struct History {
    std::int64_t next_index = 0;
    std::vector<envoy::EventWrapper> events;
    bool finished = false;
    /// When the generation finished: its unacknowledged events (its Stopped among them) are kept
    /// a while longer, since "written" is not "processed": an engine killed right after would
    /// otherwise never learn the actor stopped and never start it again.
    util::SteadyTime finished_at{};
  };
  /// Drops finished generations whose events the engine acknowledged, or that finished long ago.
  void prune_history();

  Task<void> run();
  Task<void> read_loop(std::shared_ptr<net::WebSocket> socket);
  void on_message(const envoy::ToEnvoy& message);
  void on_init(const envoy::ToEnvoyInit& init);
  void on_commands(const envoy::ToEnvoyCommands& commands);
  void on_ack_events(const envoy::ToEnvoyAckEvents& ack);
  void on_kv_response(const envoy::ToEnvoyKvResponse& response);
  void write(const envoy::ToRivet& message);
  void start_lost_timer();
  static Task<void> lose_after(std::shared_ptr<EnvoyLink> self,
                               util::Millis delay,
                               std::uint64_t epoch);
  void fail_pending_kv(const Error& error);
  std::string url() const;

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  EnvoyLinkOptions options_;
  EnvoyLinkHandler* handler_ = nullptr;

  // On the strand.
  std::shared_ptr<net::WebSocket> socket_;
  bool initialized_ = false;  // ToEnvoyInit seen on the current socket
  bool ever_initialized_ = false;
  bool stopped_ = false;
  bool lost_ = false;
  std::optional<Error> last_error_;
  envoy::ProtocolMetadata metadata_{15'000, 1'800'000, 20u << 20};
  std::uint64_t disconnect_epoch_ = 0;  // bumped on every disconnect (lost-timer identity)
  std::map<GenKey, std::int64_t> last_command_;
  std::map<GenKey, History> history_;
  std::vector<envoy::ToRivet> queued_;  // tunnel messages waiting for a connection
  std::uint32_t next_kv_id_ = 0;
  std::map<std::uint32_t, std::shared_ptr<PendingKv>> kv_pending_;
  std::vector<std::shared_ptr<PendingKv>> connected_waiters_;
};

}  // namespace rivetkit::engine
