#include "engine/envoy_driver.hpp"

#include "core/errors.hpp"
#include "core/keys.hpp"
#include "engine/kv_actor_store.hpp"
#include "net/http_client.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"
#include "util/url.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace rivetkit::engine {

namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

std::string stream_key(const envoy::GatewayId& gw, const envoy::RequestId& req) {
  std::string k(8, '\0');
  for (std::size_t i = 0; i < 4; ++i) {
    k[i] = static_cast<char>(gw[i]);
    k[4 + i] = static_cast<char>(req[i]);
  }
  return k;
}

const char* reason_name(envoy::StopActorReason r) {
  switch (r) {
    case envoy::StopActorReason::kSleepIntent:
      return "sleep";
    case envoy::StopActorReason::kStopIntent:
      return "stop";
    case envoy::StopActorReason::kDestroy:
      return "destroy";
    case envoy::StopActorReason::kGoingAway:
      return "going away";
    case envoy::StopActorReason::kLost:
      return "lost";
  }
  return "?";
}

net::HttpResponse plain_error(unsigned status, std::string body, std::string code) {
  net::HttpResponse resp;
  resp.status = status;
  resp.body = std::move(body);
  resp.set_header("content-type", "text/plain; charset=utf-8");
  resp.set_header("x-rivet-error", std::move(code));
  return resp;
}

}  // namespace

EnvoyDriver::EnvoyDriver(asio::any_io_executor io,
                         core::Runtime& runtime,
                         std::shared_ptr<EnvoyLink> link,
                         EngineApiOptions api)
    : io_(std::move(io)),
      runtime_(runtime),
      link_(std::move(link)),
      client_(io_, runtime_, std::move(api)),
      actors_changed_(std::make_unique<core::Notifier>(link_->strand())) {}

void EnvoyDriver::start() {
  std::weak_ptr<EnvoyDriver> weak = shared_from_this();
  runtime_.set_waker([weak](std::string actor_id) { return wake_weak(weak, std::move(actor_id)); });
  link_->start(this);
}

std::size_t EnvoyDriver::running_actors() const {
  return actors_.size();
}

// ---- commands -----------------------------------------------------------------------------------

void EnvoyDriver::on_commands(std::vector<envoy::CommandWrapper> commands) {
  for (const auto& c : commands) {
    if (const auto* start = std::get_if<envoy::CommandStartActor>(&c.inner)) {
      handle_start(c.checkpoint, *start);
    } else {
      handle_stop(c.checkpoint, std::get<envoy::CommandStopActor>(c.inner).reason);
    }
  }
}

void EnvoyDriver::handle_start(const envoy::ActorCheckpoint& cp,
                               const envoy::CommandStartActor& start) {
  auto it = actors_.find(cp.actor_id);
  bool stop_previous = false;
  if (it != actors_.end()) {
    if (it->second.generation >= cp.generation) {
      log::warn("actor {}: ignoring a start of generation {} (generation {} is here)", cp.actor_id,
                cp.generation, it->second.generation);
      return;
    }
    // An older generation is still here (the engine moved on after losing us): it goes first.
    stop_previous = true;
  }
  if (shutting_down_) {
    // Not ours to run any more; the engine reallocates it after this report.
    report_stopped(cp.actor_id, cp.generation, false, "envoy is shutting down");
    return;
  }
  recent_stops_.forget(cp.actor_id);
  ActorEntry entry;
  entry.generation = cp.generation;
  entry.config = start.config;
  actors_[cp.actor_id] = std::move(entry);
  actors_changed_->notify_all();
  util::spawn(link_->strand(),
              start_actor(shared_from_this(), cp.actor_id, cp.generation,
                          start.hibernating_requests, stop_previous),
              "start actor");
}

void EnvoyDriver::handle_stop(const envoy::ActorCheckpoint& cp, envoy::StopActorReason reason) {
  auto it = actors_.find(cp.actor_id);
  if (it == actors_.end() || it->second.generation != cp.generation) {
    // Nothing of that generation runs here (it stopped already, e.g. before the engine
    // restarted and asked again): answer the stop anyway, or the engine waits for this
    // generation for ever and never starts the actor again.
    log::info("actor {}: answering a {} stop for generation {} that is not running here",
              cp.actor_id, reason_name(reason), cp.generation);
    const bool lost = reason == envoy::StopActorReason::kLost;
    report_stopped(cp.actor_id, cp.generation, !lost,
                   lost ? std::optional<std::string>("envoy connection lost") : std::nullopt);
    return;
  }
  auto& e = it->second;
  if (e.phase == Phase::kStarting) {
    e.pending_stop = reason;  // applied when the start finishes
    return;
  }
  if (e.phase == Phase::kStopping) {
    return;
  }
  e.phase = Phase::kStopping;
  util::spawn(link_->strand(), stop_actor(shared_from_this(), cp.actor_id, cp.generation, reason),
              "stop actor");
}

// An actor started for a request may only idle-sleep once that request had time to arrive
// (ActorInstance::Spec::first_request_grace): the gateway forwards it after the engine saw the
// start, a round trip that takes hundreds of milliseconds on a busy engine.
constexpr std::chrono::milliseconds kFirstRequestGrace{3000};

Task<void> EnvoyDriver::start_actor(std::shared_ptr<EnvoyDriver> self,
                                    std::string actor_id,
                                    std::uint32_t generation,
                                    std::vector<envoy::HibernatingRequest> hibernating,
                                    bool stop_previous) {
  if (stop_previous) {
    auto stop_op = self->runtime_.stop(actor_id, core::StopReason::kSleep);
    co_await std::move(stop_op);
  }
  auto it = self->actors_.find(actor_id);
  if (it == self->actors_.end() || it->second.generation != generation) {
    co_return;
  }
  envoy::ActorConfig config = it->second.config;
  auto definition = self->runtime_.definition(config.name);
  if (!definition) {
    log::error("actor {}: the engine started unknown actor type '{}'", actor_id, config.name);
    self->actors_.erase(it);
    self->actors_changed_->notify_all();
    self->report_stopped(actor_id, generation, false, "unknown actor name: " + config.name);
    co_return;
  }
  // Hibernated sockets of this actor resume before it runs (§4.11); ones this process does not
  // hold (it was restarted, or the actor moved here) are closed so their clients reconnect.
  log::debug("actor {}: start generation {} with {} hibernating request(s)", actor_id, generation,
             hibernating.size());
  {
    std::lock_guard lock(self->restore_mutex_);
    for (const auto& hr : hibernating) {
      self->listed_hibernating_[stream_key(hr.gateway_id, hr.request_id)] = actor_id;
    }
  }
  for (const auto& hr : hibernating) {
    auto key = stream_key(hr.gateway_id, hr.request_id);
    auto ws = self->sockets_by_request_.find(key);
    if (ws != self->sockets_by_request_.end() && !ws->second->closed()) {
      ws->second->open();
    } else {
      // Not held here: the instance may resume it from its persisted connection record.
      std::lock_guard lock(self->restore_mutex_);
      Restorable slot;
      slot.actor_id = actor_id;
      slot.gateway_id = hr.gateway_id;
      slot.request_id = hr.request_id;
      self->restorable_[key] = std::move(slot);
    }
  }
  core::Runtime::SpecFactory make_spec = [self, actor_id, generation, config,
                                          definition]() -> Task<Result<core::ActorInstance::Spec>> {
    core::ActorInstance::Spec spec;
    spec.actor_id = actor_id;
    spec.name = config.name;
    if (config.key) {
      auto key = core::parse_key(*config.key);
      spec.key = key ? std::move(*key) : std::vector<std::string>{*config.key};
    }
    spec.generation = generation;
    spec.definition = definition;
    spec.driver = self.get();
    spec.first_request_grace = kFirstRequestGrace;
    co_return spec;
  };
  auto acquire_op = self->runtime_.acquire(actor_id, std::move(make_spec));
  auto started = co_await std::move(acquire_op);
  it = self->actors_.find(actor_id);
  if (it == self->actors_.end() || it->second.generation != generation) {
    co_return;  // dropped meanwhile (engine lost)
  }
  self->finish_restores(actor_id, started ? *started : nullptr);
  if (!started) {
    log::error("actor {}: start failed: {}", actor_id, started.error().message);
    self->actors_.erase(it);
    self->actors_changed_->notify_all();
    self->report_stopped(actor_id, generation, false, started.error().message);
    co_return;
  }
  auto& e = it->second;
  e.phase = Phase::kRunning;
  self->actors_changed_->notify_all();
  self->link_->send_event(actor_id, generation,
                          envoy::EventActorStateUpdate{envoy::ActorStateRunning{}});
  // The engine clears an alarm that woke the actor; set the current one again (§4.5).
  self->link_->send_event(actor_id, generation, envoy::EventActorSetAlarm{e.alarm});
  if (!e.pending_stop && e.stop_intent_deferred && !e.stop_intent_sent) {
    e.stop_intent_sent = true;
    self->link_->send_event(actor_id, generation,
                            envoy::EventActorIntent{envoy::ActorIntentStop{}});
  } else if (!e.pending_stop && e.sleep_intent_deferred && !e.sleep_intent_sent) {
    e.sleep_intent_sent = true;
    self->link_->send_event(actor_id, generation,
                            envoy::EventActorIntent{envoy::ActorIntentSleep{}});
  }
  if (e.pending_stop) {
    auto reason = *e.pending_stop;
    e.pending_stop.reset();
    e.phase = Phase::kStopping;
    auto stop_op = stop_actor(self, actor_id, generation, reason);
    co_await std::move(stop_op);
  }
}

Task<void> EnvoyDriver::stop_actor(std::shared_ptr<EnvoyDriver> self,
                                   std::string actor_id,
                                   std::uint32_t generation,
                                   envoy::StopActorReason reason) {
  using R = envoy::StopActorReason;
  bool ok = true;
  std::optional<std::string> message;
  if (reason == R::kLost) {
    // The engine has already moved on; stop here without waiting for anything.
    util::spawn(self->io_, self->runtime_.stop(actor_id, core::StopReason::kSleep),
                "stop lost actor");
    ok = false;
    message = "envoy connection lost";
  } else if (reason == R::kDestroy || reason == R::kStopIntent) {
    auto stop_op = self->runtime_.stop(actor_id, core::StopReason::kDestroy);
    co_await std::move(stop_op);
    // The engine deletes a destroyed actor's KV itself; wipe it anyway so nothing of it can be
    // read by a later start of the same id.
    auto drop_op = KvActorStore::drop(self->link_, actor_id);
    auto dropped = co_await std::move(drop_op);
    if (!dropped) {
      log::warn("actor {}: could not wipe its data: {}", actor_id, dropped.error().message);
    }
    self->runtime_.forget(actor_id);
    self->link_->send_event(actor_id, generation, envoy::EventActorSetAlarm{std::nullopt});
  } else {
    auto stop_op = self->runtime_.stop(actor_id, core::StopReason::kSleep);
    co_await std::move(stop_op);
    auto it = self->actors_.find(actor_id);
    std::optional<std::int64_t> alarm =
        it != self->actors_.end() ? it->second.alarm : std::optional<std::int64_t>{};
    // The final alarm goes before Stopped, so the engine wakes the actor for it (§4.5).
    self->link_->send_event(actor_id, generation, envoy::EventActorSetAlarm{alarm});
  }
  auto it = self->actors_.find(actor_id);
  if (it != self->actors_.end() && it->second.generation == generation) {
    self->actors_.erase(it);
    self->actors_changed_->notify_all();
  }
  self->recent_stops_.stopped(actor_id, generation, self->runtime_.config().clock->steady_now());
  self->report_stopped(actor_id, generation, ok, std::move(message));
}

void EnvoyDriver::report_stopped(const std::string& actor_id,
                                 std::uint32_t generation,
                                 bool ok,
                                 std::optional<std::string> message) {
  link_->send_event(actor_id, generation,
                    envoy::EventActorStateUpdate{envoy::ActorStateStopped{
                        ok ? envoy::StopCode::kOk : envoy::StopCode::kError, std::move(message)}});
  link_->forget_generation(actor_id, generation);
}

void EnvoyDriver::drop_all_actors(const char* why) {
  for (auto& [id, e] : actors_) {
    log::warn("actor {}: stopping ({})", id, why);
    util::spawn(io_, runtime_.stop(id, core::StopReason::kSleep), "stop actor");
  }
  actors_.clear();
  actors_changed_->notify_all();
}

void EnvoyDriver::on_lost() {
  drop_all_actors("the engine is unreachable");
}

void EnvoyDriver::on_evicted() {
  shutting_down_ = true;
  drop_all_actors("this envoy was evicted");
}

// ---- requests from actors -----------------------------------------------------------------------

void EnvoyDriver::request_sleep(const std::string& actor_id) {
  asio::post(link_->strand(), [self = shared_from_this(), actor_id] {
    auto it = self->actors_.find(actor_id);
    if (it == self->actors_.end() || it->second.sleep_intent_sent) {
      return;
    }
    if (it->second.phase == Phase::kStarting) {
      it->second.sleep_intent_deferred = true;
      return;
    }
    if (it->second.phase != Phase::kRunning) {
      return;
    }
    it->second.sleep_intent_sent = true;
    self->link_->send_event(actor_id, it->second.generation,
                            envoy::EventActorIntent{envoy::ActorIntentSleep{}});
  });
}

void EnvoyDriver::request_destroy(const std::string& actor_id) {
  asio::post(link_->strand(), [self = shared_from_this(), actor_id] {
    auto it = self->actors_.find(actor_id);
    if (it == self->actors_.end() || it->second.stop_intent_sent) {
      return;
    }
    if (it->second.phase == Phase::kStarting) {
      it->second.stop_intent_deferred = true;
      return;
    }
    it->second.stop_intent_sent = true;
    self->link_->send_event(actor_id, it->second.generation,
                            envoy::EventActorIntent{envoy::ActorIntentStop{}});
  });
}

void EnvoyDriver::alarm_changed(const std::string& actor_id, std::optional<std::int64_t> at_ms) {
  asio::post(link_->strand(), [self = shared_from_this(), actor_id, at_ms] {
    auto it = self->actors_.find(actor_id);
    if (it == self->actors_.end()) {
      return;
    }
    it->second.alarm = at_ms;
    if (it->second.phase == Phase::kRunning) {
      self->link_->send_event(actor_id, it->second.generation, envoy::EventActorSetAlarm{at_ms});
    }
  });
}

std::shared_ptr<net::WebSocket> EnvoyDriver::hibernated_socket(
    const storage::PersistedConn& record) {
  if (auto held = sockets_.find(record.conn_id)) {
    const auto key = record.tunnel_id;
    std::lock_guard lock(restore_mutex_);
    if (listed_hibernating_.count(key) != 0) {
      unlisted_once_.erase(key);
      return held;  // it waited in this process while the actor slept
    }
    if (unlisted_once_.count(key) == 0) {
      // Not listed, maybe only not yet: the gateway records a hibernating request a moment
      // after the sleep began (docs/engine-mode.md, "Restore"). The socket stays; if its client
      // did leave, the gateway reopens the request to say so (handle_websocket) or the next
      // start does not list it either.
      std::erase_if(unlisted_once_, [](const auto& e) { return e.second.expired(); });
      unlisted_once_[key] = held;
      log::debug("hibernated socket held here but not listed at this start; kept conn_id={}",
                 record.conn_id);
      return held;
    }
    unlisted_once_.erase(key);
    // Not listed twice: the client left while the actor slept. The connection is restored
    // without a socket (its on_disconnect runs) and the socket here ends without a word to the
    // gateway, which has dropped the request (a close would make it reopen one).
    asio::post(link_->strand(), [self = shared_from_this(), key = record.tunnel_id] {
      auto it = self->sockets_by_request_.find(key);
      if (it != self->sockets_by_request_.end()) {
        it->second->on_remote_close(1001, "ws.client_gone_during_sleep");
        self->sockets_by_request_.erase(it);
      }
      const auto now = self->runtime_.config().clock->steady_now();
      std::erase_if(self->gone_requests_,
                    [&](const auto& e) { return now - e.second > std::chrono::minutes(5); });
      self->gone_requests_[key] = now;
    });
    return nullptr;
  }
  if (record.tunnel_id.size() != 8) {  // gateway id + request id (tunnel_websocket.cpp)
    return nullptr;
  }
  std::lock_guard lock(restore_mutex_);
  auto it = restorable_.find(record.tunnel_id);
  if (it == restorable_.end() || it->second.socket) {
    return nullptr;  // the gateway no longer holds this client
  }
  auto encoding = protocol::client::parse_encoding(record.encoding);
  if (!encoding) {
    return nullptr;
  }
  auto& slot = it->second;
  slot.socket = TunnelWebSocket::restored(link_, slot.gateway_id, slot.request_id,
                                          record.client_message_index, record.server_message_index);
  slot.conn_id = record.conn_id;
  slot.raw = record.kind == "websocket";
  slot.encoding = *encoding;
  return slot.socket;
}

void EnvoyDriver::finish_restores(const std::string& actor_id,
                                  std::shared_ptr<core::ActorInstance> instance) {
  std::vector<std::pair<std::string, Restorable>> mine;
  {
    std::lock_guard lock(restore_mutex_);
    for (auto it = listed_hibernating_.begin(); it != listed_hibernating_.end();) {
      it = it->second == actor_id ? listed_hibernating_.erase(it) : std::next(it);
    }
    for (auto it = restorable_.begin(); it != restorable_.end();) {
      if (it->second.actor_id == actor_id) {
        mine.emplace_back(it->first, std::move(it->second));
        it = restorable_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& [key, slot] : mine) {
    if (!slot.socket || !instance) {
      // No record for it (the client closed before the actor slept, or a stale entry the engine
      // keeps listing for a while): the client reconnects.
      send_tunnel(slot.gateway_id, slot.request_id, 0,
                  envoy::ToRivetWebSocketClose{1000, "ws.meta_not_found_during_restore", false});
      continue;
    }
    log::debug("actor {}: resumed hibernated connection {} in this process", actor_id,
               slot.conn_id);
    sockets_by_request_[key] = slot.socket;
    slot.socket->open();
    util::spawn(link_->strand(),
                run_resumed(shared_from_this(), key, slot.socket, make_target(instance),
                            slot.conn_id, slot.raw, slot.encoding),
                "resumed websocket");
  }
}

Task<void> EnvoyDriver::run_resumed(std::shared_ptr<EnvoyDriver> self,
                                    std::string key,
                                    std::shared_ptr<TunnelWebSocket> ws,
                                    core::ActorTarget target,
                                    std::string conn_id,
                                    bool raw,
                                    protocol::client::Encoding encoding) {
  auto op =
      core::ActorRouter::resume_websocket(std::move(target), std::move(conn_id), raw, encoding, ws);
  co_await std::move(op);
  auto it = self->sockets_by_request_.find(key);
  if (it != self->sockets_by_request_.end() && it->second == ws) {
    self->sockets_by_request_.erase(it);
  }
}

void EnvoyDriver::conns_durable(std::vector<storage::PersistedConn> conns) {
  asio::post(link_->strand(), [self = shared_from_this(), conns = std::move(conns)] {
    for (const auto& c : conns) {
      auto it = self->sockets_by_request_.find(c.tunnel_id);
      if (it != self->sockets_by_request_.end()) {
        it->second->ack_durable(c.client_message_index);
      }
    }
  });
}

// ---- resolving actors for requests --------------------------------------------------------------

// A command for an actor with no instance here (core/runtime/actor_slot.hpp). The slot waits
// for the instance to start, on the runtime's clock; this only asks for the start.
Task<Result<void>> EnvoyDriver::wake(std::string actor_id) {
  auto op = asio::co_spawn(link_->strand(), wake_on_link(shared_from_this(), std::move(actor_id)),
                           asio::use_awaitable);
  co_return co_await std::move(op);
}

Task<Result<void>> EnvoyDriver::wake_weak(std::weak_ptr<EnvoyDriver> weak, std::string actor_id) {
  auto self = weak.lock();
  if (!self) {
    co_return fail(Error{"actor", "stopping", "The envoy is stopping", std::nullopt, false});
  }
  auto op = self->wake(std::move(actor_id));
  co_return co_await std::move(op);
}

Task<void> EnvoyDriver::wait_stopped(std::string actor_id, std::uint32_t generation) {
  auto task = [](std::shared_ptr<EnvoyDriver> self, std::string id,
                 std::uint32_t gen) -> Task<void> {
    while (true) {
      auto it = self->actors_.find(id);
      if (it == self->actors_.end() || it->second.generation != gen) {
        co_return;
      }
      auto changed_op = self->actors_changed_->wait();
      co_await std::move(changed_op);
    }
  };
  auto op =
      asio::co_spawn(link_->strand(), task(shared_from_this(), std::move(actor_id), generation),
                     asio::use_awaitable);
  co_await std::move(op);
}

Task<Result<std::unique_ptr<storage::ActorStore>>> EnvoyDriver::storage_for(
    std::string actor_id, std::uint32_t generation) {
  // The create input comes with the engine's start command, kept in the actor's entry (state of
  // the link's strand).
  auto task = [](std::shared_ptr<EnvoyDriver> self, std::string id,
                 std::uint32_t gen) -> Task<Result<std::unique_ptr<storage::ActorStore>>> {
    auto it = self->actors_.find(id);
    if (it == self->actors_.end() || it->second.generation != gen) {
      co_return fail(core::actor_stopping());  // stopped (or moved) before it loaded
    }
    std::weak_ptr<EnvoyDriver> weak = self;
    co_return std::make_unique<KvActorStore>(self->link_, id, gen, it->second.config.input,
                                             [weak](std::vector<storage::PersistedConn> conns) {
                                               if (auto driver = weak.lock()) {
                                                 driver->conns_durable(std::move(conns));
                                               }
                                             });
  };
  auto op =
      asio::co_spawn(link_->strand(), task(shared_from_this(), std::move(actor_id), generation),
                     asio::use_awaitable);
  co_return co_await std::move(op);
}

Task<Result<void>> EnvoyDriver::wake_on_link(std::shared_ptr<EnvoyDriver> self,
                                             std::string actor_id) {
  // An actor the engine starts here (or runs) is the slot's to wait for: its start completing
  // changes the slot, and the work waiting there runs first, before a stop that came meanwhile
  // (a destroy waits for the start). One the engine stops here settles first (the slot is
  // empty, the entry not yet gone): then it is woken below.
  const auto& clock = self->runtime_.config().clock;
  const auto deadline = clock->steady_now() + self->runtime_.config().instance_wait;
  while (true) {
    auto it = self->actors_.find(actor_id);
    if (it == self->actors_.end()) {
      break;
    }
    if (it->second.phase != Phase::kStopping) {
      co_return Result<void>{};
    }
    auto changed_op = self->actors_changed_->wait();
    auto timeout_op = clock->wait_until(deadline);
    auto raced = co_await (std::move(changed_op) || std::move(timeout_op));
    if (raced.index() == 1) {
      co_return Result<void>{};  // the slot answers for the time it waited
    }
  }
  if (self->shutting_down_) {
    co_return fail(Error{"actor", "stopping", "The envoy is stopping", std::nullopt, false});
  }
  // Asleep (or never started here): wake it as a client would, through the gateway. The request
  // returns once the actor runs (here or elsewhere) and has answered it.
  net::HttpClientRequest wake;
  wake.url = self->link_->options().endpoint;
  while (!wake.url.empty() && wake.url.back() == '/') {
    wake.url.pop_back();
  }
  wake.url += "/gateway/" + util::percent_encode(actor_id) + "/health";
  wake.timeout = std::chrono::seconds(30);
  auto wake_op = net::http_request(self->link_->strand(), std::move(wake));
  auto woke_resp = co_await std::move(wake_op);
  if (woke_resp && woke_resp->status == 404) {
    co_return fail(core::actor_not_found(actor_id));
  }
  co_return Result<void>{};
}

// The instance a tunneled request was routed to. Only the engine's start command creates an
// instance; here a request joins it (waiting in its slot while it starts) or uses it. While the
// engine's entry is stopping, or its start has not reached the runtime yet, this waits for the
// entries to change (a start, a start finishing, a stop finishing each notify actors_changed_).
// The request then runs through the slot like any other work (Runtime::dispatch).
std::optional<std::uint32_t> EnvoyDriver::generation_here(const std::string& actor_id) const {
  auto it = actors_.find(actor_id);
  if (it == actors_.end()) {
    return std::nullopt;
  }
  return it->second.generation;
}

// The generation a request or WebSocket open was sent to: the one here, else one that stopped
// here moments ago (the gateway sent it before it saw the stop; RecentStops).
std::optional<std::uint32_t> EnvoyDriver::arrival_generation(const std::string& actor_id) {
  if (auto here = generation_here(actor_id)) {
    return here;
  }
  return recent_stops_.find(actor_id, runtime_.config().clock->steady_now());
}

Task<Result<std::shared_ptr<core::ActorInstance>>> EnvoyDriver::resolve_for_request(
    std::shared_ptr<EnvoyDriver> self,
    std::string actor_id,
    std::optional<std::uint32_t> arrived_for) {
  const auto& clock = self->runtime_.config().clock;
  const auto deadline = clock->steady_now() + self->runtime_.config().instance_wait;
  bool woke = false;
  while (true) {
    auto it = self->actors_.find(actor_id);
    if (arrived_for && (it == self->actors_.end() || it->second.generation != *arrived_for)) {
      co_return fail(core::generation_gone(*arrived_for));  // never wake another for it
    }
    if (it != self->actors_.end() && it->second.phase != Phase::kStopping) {
      core::Runtime::SpecFactory refuse = []() -> Task<Result<core::ActorInstance::Spec>> {
        co_return fail(
            Error{"actor", "stopping", "The actor is not started here yet", std::nullopt, false});
      };
      auto acquire_op = self->runtime_.acquire(actor_id, std::move(refuse));
      auto acquired = co_await std::move(acquire_op);
      if (acquired) {
        co_return acquired;
      }
      if (acquired.error().group == "actor" && acquired.error().code == "not_found") {
        co_return acquired;
      }
    } else if (it == self->actors_.end() && !woke && !self->shutting_down_) {
      woke = true;
      auto wake_op = wake_on_link(self, actor_id);
      auto woken = co_await std::move(wake_op);
      if (!woken) {
        co_return fail(woken.error());
      }
      continue;
    }
    if (clock->steady_now() >= deadline) {
      co_return fail(Error{"guard", "actor_ready_timeout", "The actor did not become ready in time",
                           std::nullopt, true});
    }
    auto changed_op = self->actors_changed_->wait();
    auto timeout_op = clock->wait_until(deadline);
    co_await (std::move(changed_op) || std::move(timeout_op));
  }
}

core::ActorTarget EnvoyDriver::make_target(std::shared_ptr<core::ActorInstance> instance) {
  core::ActorTarget target;
  target.runtime = &runtime_;
  target.instance = std::move(instance);
  target.sockets = &sockets_;
  return target;
}

// ---- tunnel -------------------------------------------------------------------------------------

void EnvoyDriver::send_tunnel(envoy::GatewayId gw,
                              envoy::RequestId req,
                              envoy::MessageIndex index,
                              envoy::ToRivetTunnelMessageKind kind) {
  link_->send(envoy::ToRivet{
      envoy::ToRivetTunnelMessage{envoy::MessageId{gw, req, index}, std::move(kind)}});
}

void EnvoyDriver::on_tunnel(envoy::ToEnvoyTunnelMessage message) {
  const auto& id = message.message_id;
  std::string key = stream_key(id.gateway_id, id.request_id);
  std::visit(
      [&](auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, envoy::ToEnvoyRequestStart>) {
          HttpStream stream;
          stream.generation = arrival_generation(m.actor_id);
          stream.body = m.body.value_or(std::string());
          stream.start = std::move(m);
          if (stream.start.stream) {
            http_streams_[key] = std::move(stream);
          } else {
            http_active_.insert(key);
            util::spawn(link_->strand(), handle_http(shared_from_this(), key, std::move(stream)),
                        "tunneled request");
          }
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyRequestChunk>) {
          auto it = http_streams_.find(key);
          if (it == http_streams_.end()) {
            return;
          }
          auto& s = it->second;
          s.body += m.body;
          s.consumed += m.body.size();
          // Credit for the upload, numbered in the request's own sequence (gateway 3 checks it).
          send_tunnel(id.gateway_id, id.request_id, s.out_index++,
                      envoy::ToRivetRequestBodyWindowUpdate{s.consumed});
          if (m.finish) {
            HttpStream done = std::move(s);
            http_streams_.erase(it);
            http_active_.insert(key);
            util::spawn(link_->strand(), handle_http(shared_from_this(), key, std::move(done)),
                        "tunneled request");
          }
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyRequestAbort>) {
          http_streams_.erase(key);
          http_active_.erase(key);  // a response still being computed is dropped
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyWebSocketOpen>) {
          auto generation = arrival_generation(m.actor_id);
          util::spawn(link_->strand(),
                      handle_websocket(shared_from_this(), key, id.gateway_id, id.request_id,
                                       std::move(m), generation),
                      "tunneled websocket");
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyWebSocketMessage>) {
          auto it = sockets_by_request_.find(key);
          if (it != sockets_by_request_.end()) {
            it->second->on_message(id.message_index, net::WsMessage{m.binary, std::move(m.data)});
          }
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyWebSocketClose>) {
          auto it = sockets_by_request_.find(key);
          if (it != sockets_by_request_.end()) {
            it->second->on_remote_close(m.code.value_or(1005), m.reason.value_or(std::string()));
            sockets_by_request_.erase(it);
          }
        }
        // RequestBodyCancel / ResponseBodyWindowUpdate: responses are sent in one piece.
      },
      message.message_kind);
}

Task<void> EnvoyDriver::handle_http(std::shared_ptr<EnvoyDriver> self,
                                    std::string key,
                                    HttpStream stream) {
  auto& start = stream.start;
  envoy::GatewayId gw{};
  envoy::RequestId req{};
  for (std::size_t i = 0; i < 4; ++i) {
    gw[i] = static_cast<std::uint8_t>(key[i]);
    req[i] = static_cast<std::uint8_t>(key[4 + i]);
  }
  net::HttpRequest request;
  request.method = start.method;
  request.target = start.path;
  for (auto& [name, value] : start.headers) {
    std::string lower = name;
    for (auto& ch : lower) {
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    request.headers.push_back(net::Header{std::move(lower), value});
  }
  request.body = std::move(stream.body);
  net::HttpResponse response;
  auto unanswered = std::make_shared<bool>(false);
  auto resolve_op = resolve_for_request(self, start.actor_id, stream.generation);
  auto instance = co_await std::move(resolve_op);
  if (!instance && core::is_generation_gone(instance.error())) {
    *unanswered = true;
  } else if (!instance) {
    response = plain_error(503, "Actor not found", "envoy.actor_not_found");
  } else {
    auto target = self->make_target(std::move(*instance));
    target.generation = stream.generation;
    target.unanswered = unanswered;
    auto route_op =
        core::ActorRouter::handle_http(std::move(target), std::move(request), start.path);
    try {
      response = co_await std::move(route_op);
    } catch (const std::exception& e) {
      log::error("tunneled request failed: {}", e.what());
      response = plain_error(
          500, R"({"group":"core","code":"internal_error","message":"An internal error occurred"})",
          "envoy.fetch_failed");
      response.set_header("content-type", "application/json");
    }
  }
  if (self->http_active_.erase(key) == 0) {
    co_return;  // aborted by the gateway
  }
  if (*unanswered) {
    // The generation it was sent to stopped before running it. The gateway saw the stop and
    // sends the request again with the same request id: an answer now could be taken for the
    // retry's, and running it on the next generation would run it twice.
    log::debug(
        "actor {}: {} arrived for generation {}, which stopped first; left to the "
        "gateway's retry",
        start.actor_id, start.path, stream.generation.value_or(0));
    co_return;
  }
  if (response.body.size() > self->link_->metadata().max_response_payload_size) {
    response = plain_error(500, "Response too large for the engine gateway", "envoy.fetch_failed");
  }
  envoy::ToRivetResponseStart out;
  out.status = static_cast<std::uint16_t>(response.status);
  bool has_length = false;
  for (auto& h : response.headers) {
    has_length = has_length || h.name == "content-length";
    out.headers.emplace_back(std::move(h.name), std::move(h.value));
  }
  if (!has_length) {
    out.headers.emplace_back("content-length", std::to_string(response.body.size()));
  }
  out.body = std::move(response.body);
  out.stream = false;
  self->send_tunnel(gw, req, stream.out_index, std::move(out));
}

bool EnvoyDriver::can_hibernate(const std::string& actor_id,
                                const std::string& path,
                                const envoy::Headers& headers) const {
  auto split = util::split_target(path);
  if (split.path == "/connect") {
    return true;
  }
  auto it = actors_.find(actor_id);
  if (it == actors_.end()) {
    return false;
  }
  auto definition = runtime_.definition(it->second.config.name);
  if (!definition || !definition->options.can_hibernate_websocket) {
    return false;
  }
  Request user;
  user.method = "GET";
  std::string p(split.path);
  if (p == "/websocket" || p.rfind("/websocket/", 0) == 0) {
    p = p.substr(10);
  }
  user.path = p.empty() ? "/" : p;
  user.search = split.has_query ? "?" + std::string(split.query) : std::string();
  for (const auto& [name, value] : headers) {
    user.headers.push_back(HttpHeader{name, value});
  }
  return definition->options.can_hibernate_websocket(user);
}

Task<void> EnvoyDriver::handle_websocket(std::shared_ptr<EnvoyDriver> self,
                                         std::string key,
                                         envoy::GatewayId gateway_id,
                                         envoy::RequestId request_id,
                                         envoy::ToEnvoyWebSocketOpen open,
                                         std::optional<std::uint32_t> generation) {
  auto held = self->sockets_by_request_.find(key);
  bool held_open = false;
  if (held != self->sockets_by_request_.end() && !held->second->closed()) {
    std::lock_guard lock(self->restore_mutex_);
    held_open = self->unlisted_once_.erase(key) != 0;
  }
  if (held_open) {
    // A held socket the last start did not list (hibernated_socket kept it): a wake resumes a
    // hibernated request without an open, so this open is the gateway delivering the close of a
    // client that left while the actor slept. The held socket ends (its connection's
    // on_disconnect runs) and the new one is drained below.
    log::debug("actor {}: reopened request of a held socket; its client left during sleep",
               open.actor_id);
    held->second->on_remote_close(1001, "ws.client_gone_during_sleep");
    self->sockets_by_request_.erase(held);
  }
  if (held_open || self->gone_requests_.count(key) != 0) {
    // The gateway reopening a hibernated request whose client left while the actor slept, to
    // deliver that close (its connection was restored and ended at the wake, on_disconnect
    // included). The socket is accepted, so the gateway stops retrying, and drained without
    // a connection: nobody is there to serve.
    log::debug("actor {}: reopened request of a connection gone during sleep; draining it",
               open.actor_id);
    auto ws = std::make_shared<TunnelWebSocket>(self->link_, gateway_id, request_id, false);
    self->sockets_by_request_[key] = ws;
    ws->open();
    while (true) {
      auto receive_op = ws->receive();
      if (!co_await std::move(receive_op)) {
        break;
      }
    }
    auto it = self->sockets_by_request_.find(key);
    if (it != self->sockets_by_request_.end() && it->second == ws) {
      self->sockets_by_request_.erase(it);
    }
    co_return;
  }
  auto resolve_op = resolve_for_request(self, open.actor_id, generation);
  auto instance = co_await std::move(resolve_op);
  if (!instance && core::is_generation_gone(instance.error())) {
    // The generation it was sent to stopped first: the gateway has failed this open (it does
    // not retry WebSocket opens), and opening it on the next generation would leave a
    // connection there that no client holds.
    log::debug("actor {}: WebSocket open for generation {}, which stopped first; refused",
               open.actor_id, generation.value_or(0));
    self->send_tunnel(gateway_id, request_id, 0,
                      envoy::ToRivetWebSocketClose{1011, "actor.generation_gone", false});
    co_return;
  }
  if (!instance) {
    self->send_tunnel(gateway_id, request_id, 0,
                      envoy::ToRivetWebSocketClose{1011, "Actor not found", false});
    co_return;
  }
  auto ws = std::make_shared<TunnelWebSocket>(
      self->link_, gateway_id, request_id,
      self->can_hibernate(open.actor_id, open.path, open.headers));
  self->sockets_by_request_[key] = ws;
  ws->open();
  net::HttpRequest request;
  request.method = "GET";
  request.target = open.path;
  for (auto& [name, value] : open.headers) {
    request.headers.push_back(net::Header{name, value});
  }
  auto target = self->make_target(std::move(*instance));
  target.generation = generation;
  auto route_op =
      core::ActorRouter::handle_websocket(std::move(target), std::move(request), open.path, ws);
  co_await std::move(route_op);
  auto it = self->sockets_by_request_.find(key);
  if (it != self->sockets_by_request_.end() && it->second == ws) {
    self->sockets_by_request_.erase(it);
  }
}

// ---- shutdown -----------------------------------------------------------------------------------

Task<void> EnvoyDriver::shutdown(std::chrono::milliseconds limit) {
  auto task = [](std::shared_ptr<EnvoyDriver> self, std::chrono::milliseconds lim) -> Task<void> {
    self->shutting_down_ = true;
    const auto& clock = self->runtime_.config().clock;
    const auto deadline = clock->steady_now() + lim;
    if (self->link_->connected() && !self->actors_.empty()) {
      log::info("asking the engine to move {} actor(s) away", self->actors_.size());
      self->link_->send(envoy::ToRivet{envoy::ToRivetStopping{}});
      // Each stop the engine sends removes an entry (actors_changed_); no polling.
      while (!self->actors_.empty()) {
        auto changed_op = self->actors_changed_->wait();
        auto timeout_op = clock->wait_until(deadline);
        auto raced = co_await (std::move(changed_op) || std::move(timeout_op));
        if (raced.index() == 1) {
          break;
        }
      }
    }
    if (!self->actors_.empty()) {
      log::warn("{} actor(s) did not get a stop from the engine in time; sleeping them here",
                self->actors_.size());
      self->actors_.clear();
      self->actors_changed_->notify_all();
    }
    auto stop_op = self->runtime_.shutdown();
    co_await std::move(stop_op);
    // Give the last events a moment to leave before the close frame.
    auto pause_op = clock->wait_for(std::chrono::milliseconds(50));
    co_await std::move(pause_op);
    self->link_->stop();
  };
  auto op = asio::co_spawn(link_->strand(), task(shared_from_this(), limit), asio::use_awaitable);
  co_await std::move(op);
}

}  // namespace rivetkit::engine
