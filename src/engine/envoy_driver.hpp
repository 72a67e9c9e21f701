#pragma once
// EnvoyDriver: engine mode's core::ActorDriver. The engine decides where and when actors run;
// this driver turns its commands into Runtime starts and stops, reports the actor's state back as
// events, and carries tunneled HTTP requests and WebSockets to the same actor router local mode
// uses (envoy-protocol.md §4).
//
// Per actor it keeps the generation the engine started, the phase, the latest alarm and a stop
// that arrived while the actor was still starting (applied once the start finishes).
//
// Stop reasons (§4.1): SLEEP_INTENT and GOING_AWAY sleep the actor (state flushed, hibernatable
// sockets left to the gateway, alarm re-sent) and report Stopped{OK}; DESTROY and STOP_INTENT
// destroy it (on_destroy, data wiped) and report Stopped{OK}; LOST stops it and reports
// Stopped{ERROR}. A start that fails reports Stopped{ERROR, message}, never OK (which would
// destroy the actor).
//
// Work that meets an actor which is not running here (it went to sleep between two messages of
// a socket, or is being stopped) waits for the engine's next start; if none is coming the driver
// wakes the actor the way any client would, with a request through the engine's gateway.
//
// Everything runs on the link's strand; ActorDriver calls arrive from actor strands and are
// posted there.

#include "core/driver.hpp"
#include "core/notifier.hpp"
#include "core/router/router.hpp"
#include "core/runtime.hpp"
#include "core/socket_registry.hpp"
#include "engine/engine_actor_client.hpp"
#include "engine/envoy_link.hpp"
#include "engine/recent_stops.hpp"
#include "engine/tunnel_websocket.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace rivetkit::engine {

class EnvoyDriver final : public core::ActorDriver,
                          public EnvoyLinkHandler,
                          public std::enable_shared_from_this<EnvoyDriver> {
 public:
  /// `api`: the engine's HTTP API, for actor-to-actor calls (engine_actor_client.hpp).
  EnvoyDriver(boost::asio::any_io_executor io,
              core::Runtime& runtime,
              std::shared_ptr<EnvoyLink> link,
              EngineApiOptions api);

  /// Starts the link (connect, reconnect) with this driver as its handler.
  void start();
  /// Resumes once generation `generation` of `actor_id` no longer runs here (stopped, failed to
  /// start, or never started). Serverless mode ends a `/start` stream with it.
  Task<void> wait_stopped(std::string actor_id, std::uint32_t generation);
  /// Graceful stop (§4.6): tells the engine this envoy is stopping, lets it send GOING_AWAY for
  /// every actor and waits until all reported Stopped, then closes the link. Bounded by `limit`;
  /// whatever is left then is put to sleep locally without a report (the engine will consider
  /// it lost and start it elsewhere).
  Task<void> shutdown(std::chrono::milliseconds limit);

  // core::ActorDriver (any thread)
  void request_sleep(const std::string& actor_id) override;
  void request_destroy(const std::string& actor_id) override;
  void alarm_changed(const std::string& actor_id, std::optional<std::int64_t> at_ms) override;
  std::shared_ptr<net::WebSocket> hibernated_socket(const storage::PersistedConn& record) override;
  /// Asks the engine to start a sleeping actor, through its gateway.
  Task<Result<void>> wake(std::string actor_id) override;
  Task<Result<std::unique_ptr<storage::ActorStore>>> storage_for(std::string actor_id,
                                                                 std::uint32_t generation) override;
  detail::ClientApi& actor_client() override { return client_.api(); }

  // EnvoyLinkHandler (link strand)
  void on_commands(std::vector<envoy::CommandWrapper> commands) override;
  void on_tunnel(envoy::ToEnvoyTunnelMessage message) override;
  void on_lost() override;
  void on_evicted() override;

  std::size_t running_actors() const;

 private:
  enum class Phase { kStarting, kRunning, kStopping };
  struct ActorEntry {
    std::uint32_t generation = 0;
    envoy::ActorConfig config;
    Phase phase = Phase::kStarting;
    std::optional<std::int64_t> alarm;
    std::optional<envoy::StopActorReason> pending_stop;
    bool sleep_intent_sent = false;
    bool stop_intent_sent = false;
    /// Asked for while starting (e.g. by `run` at once): sent once the engine knows it runs,
    /// since the engine ignores intents of an actor it does not yet see running.
    bool sleep_intent_deferred = false;
    bool stop_intent_deferred = false;
  };
  /// A hibernating request of an actor being started that this process does not hold; the
  /// instance claims it from its connection record (hibernated_socket) while it starts.
  struct Restorable {
    std::string actor_id;
    envoy::GatewayId gateway_id{};
    envoy::RequestId request_id{};
    std::shared_ptr<TunnelWebSocket> socket;  // set once claimed
    std::string conn_id;
    bool raw = false;
    protocol::client::Encoding encoding = protocol::client::Encoding::kBare;
  };
  struct HttpStream {
    envoy::ToEnvoyRequestStart start;
    // The generation here when the request arrived: the only one that may serve it (the
    // gateway sends it again if that generation stops first).
    std::optional<std::uint32_t> generation;
    std::string body;
    envoy::MessageIndex out_index = 0;
    std::uint64_t consumed = 0;
  };

  void handle_start(const envoy::ActorCheckpoint& cp, const envoy::CommandStartActor& start);
  void handle_stop(const envoy::ActorCheckpoint& cp, envoy::StopActorReason reason);
  static Task<void> start_actor(std::shared_ptr<EnvoyDriver> self,
                                std::string actor_id,
                                std::uint32_t generation,
                                std::vector<envoy::HibernatingRequest> hibernating,
                                bool stop_previous);
  static Task<void> stop_actor(std::shared_ptr<EnvoyDriver> self,
                               std::string actor_id,
                               std::uint32_t generation,
                               envoy::StopActorReason reason);
  void report_stopped(const std::string& actor_id,
                      std::uint32_t generation,
                      bool ok,
                      std::optional<std::string> message);
  void drop_all_actors(const char* why);

  /// After a start: runs the sessions of the sockets the instance resumed, closes the rest.
  void finish_restores(const std::string& actor_id, std::shared_ptr<core::ActorInstance> instance);
  static Task<void> run_resumed(std::shared_ptr<EnvoyDriver> self,
                                std::string key,
                                std::shared_ptr<TunnelWebSocket> ws,
                                core::ActorTarget target,
                                std::string conn_id,
                                bool raw,
                                protocol::client::Encoding encoding);
  /// A commit saved these tunneled connections: their sockets acknowledge up to the saved index.
  void conns_durable(std::vector<storage::PersistedConn> conns);

  /// The runtime's waker (wake() while the driver lives).
  static Task<Result<void>> wake_weak(std::weak_ptr<EnvoyDriver> weak, std::string actor_id);
  /// The instance a tunneled request or socket is served by. With `arrived_for` (an HTTP
  /// request's generation), fails with core::generation_gone once that generation is gone.
  static Task<Result<std::shared_ptr<core::ActorInstance>>> resolve_for_request(
      std::shared_ptr<EnvoyDriver> self,
      std::string actor_id,
      std::optional<std::uint32_t> arrived_for = std::nullopt);
  /// The generation of `actor_id` here now, if any.
  std::optional<std::uint32_t> generation_here(const std::string& actor_id) const;
  /// The generation a request or WebSocket open arriving now was sent to (here or just stopped).
  std::optional<std::uint32_t> arrival_generation(const std::string& actor_id);
  static Task<Result<void>> wake_on_link(std::shared_ptr<EnvoyDriver> self, std::string actor_id);
  core::ActorTarget make_target(std::shared_ptr<core::ActorInstance> instance);
  static Task<void> handle_http(std::shared_ptr<EnvoyDriver> self,
                                std::string key,
                                HttpStream stream);
  static Task<void> handle_websocket(std::shared_ptr<EnvoyDriver> self,
                                     std::string key,
                                     envoy::GatewayId gateway_id,
                                     envoy::RequestId request_id,
                                     envoy::ToEnvoyWebSocketOpen open,
                                     std::optional<std::uint32_t> generation);
  bool can_hibernate(const std::string& actor_id,
                     const std::string& path,
                     const envoy::Headers& headers) const;
  void send_tunnel(envoy::GatewayId gw,
                   envoy::RequestId req,
                   envoy::MessageIndex index,
                   envoy::ToRivetTunnelMessageKind kind);

  boost::asio::any_io_executor io_;
  core::Runtime& runtime_;
  std::shared_ptr<EnvoyLink> link_;
  core::SocketRegistry sockets_;
  EngineActorClient client_;

  // On the link strand.
  std::map<std::string, ActorEntry> actors_;
  // Generations that stopped here a moment ago: a request on its way meanwhile is the gateway's
  // to retry (RecentStops).
  RecentStops recent_stops_{std::chrono::seconds(10), 65536};
  /// Notified when an actor entry starts running or goes (a wake waits for it to settle).
  std::unique_ptr<core::Notifier> actors_changed_;
  std::map<std::string, HttpStream> http_streams_;  // streamed uploads being collected
  std::set<std::string> http_active_;               // requests whose handler runs
  std::map<std::string, std::shared_ptr<TunnelWebSocket>> sockets_by_request_;
  /// Requests of hibernated connections found gone at a wake (stream key -> when), on the link
  /// strand. The gateway may still "reopen" such a request to deliver the client's close; that
  /// open is answered with a close, not taken as a new connection.
  std::map<std::string, std::chrono::steady_clock::time_point> gone_requests_;
  bool shutting_down_ = false;

  // Any thread (claimed from actor strands while an instance starts).
  std::mutex restore_mutex_;
  std::map<std::string, Restorable> restorable_;
  /// The hibernating requests (stream keys) the engine listed in the start of each starting
  /// actor: a socket held here whose request is not listed is gone (the client left while the
  /// actor slept; the gateway does not tell a sleeping actor).
  std::map<std::string, std::string> listed_hibernating_;  // stream key -> actor id
  /// Held sockets a start did not list once (stream key): kept, since the gateway records a
  /// hibernating request only after a short delay (up to ~128 ms of jitter plus a write), so a
  /// wake right after a sleep may not list it yet. A second start that does not list it, or the
  /// gateway reopening the request, ends it.
  std::map<std::string, std::weak_ptr<net::WebSocket>> unlisted_once_;
};

}  // namespace rivetkit::engine
