#include "engine/envoy_link.hpp"

#include "net/ws_client.hpp"
#include "protocol/envoy/codec.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"
#include "util/url.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <random>

namespace rivetkit::engine {

namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

Error link_error(std::string code, std::string message) {
  return Error{"envoy", std::move(code), std::move(message), std::nullopt, false};
}

std::string kv_kind(const envoy::KvRequestData& r) {
  static const char* names[] = {"get", "list", "put", "delete", "delete_range", "drop"};
  return names[r.index()];
}

}  // namespace

// A coroutine waiting on the strand for an answer (a KV response, the first init), until a
// deadline on the link's clock.
struct EnvoyLink::PendingKv {
  explicit PendingKv(const asio::any_io_executor& ex)
      : answered(ex, asio::steady_timer::time_point::max()) {}
  std::string actor_id;
  envoy::KvRequestData request;
  bool sent_on_current = false;
  bool done = false;
  std::optional<Result<envoy::KvResponseData>> result;
  asio::steady_timer answered;  // an event, not a clock: cancelled when the answer arrives

  void complete(Result<envoy::KvResponseData> r) {
    if (done) {
      return;
    }
    done = true;
    result = std::move(r);
    answered.cancel();
  }
  Task<void> wait(util::Clock& clock, util::SteadyTime deadline) {
    if (done) {
      co_return;
    }
    auto answer_op = answered.async_wait(asio::as_tuple(asio::use_awaitable));
    auto deadline_op = clock.wait_until(deadline);
    co_await (std::move(answer_op) || std::move(deadline_op));
  }
};

EnvoyLink::EnvoyLink(asio::any_io_executor ex, EnvoyLinkOptions options)
    : strand_(asio::make_strand(std::move(ex))), options_(std::move(options)) {
  if (!options_.clock) {
    options_.clock = std::make_shared<util::SystemClock>();
  }
}

std::string EnvoyLink::url() const {
  std::string base = options_.endpoint;
  while (!base.empty() && base.back() == '/') {
    base.pop_back();
  }
  if (base.rfind("https://", 0) == 0) {
    base = "wss://" + base.substr(8);
  } else if (base.rfind("http://", 0) == 0) {
    base = "ws://" + base.substr(7);
  }
  return base + "/envoys/connect?protocol_version=" + std::to_string(envoy::kProtocolVersion)
         + "&namespace=" + util::percent_encode(options_.namespace_name) + "&envoy_key="
         + util::percent_encode(options_.envoy_key) + "&version=" + std::to_string(options_.version)
         + "&pool_name=" + util::percent_encode(options_.pool);
}

void EnvoyLink::start(EnvoyLinkHandler* handler) {
  handler_ = handler;
  util::spawn(strand_, run(), "envoy link");
}

void EnvoyLink::stop() {
  asio::post(strand_, [self = shared_from_this()] {
    if (self->stopped_) {
      return;
    }
    self->stopped_ = true;
    if (self->socket_) {
      self->socket_->close(1000, "envoy.shutdown");
    }
    self->fail_pending_kv(link_error("stopped", "The envoy is shutting down"));
    for (auto& w : self->connected_waiters_) {
      w->complete(fail(link_error("stopped", "The envoy is shutting down")));
    }
    self->connected_waiters_.clear();
  });
}

Task<Result<void>> EnvoyLink::wait_connected(std::chrono::milliseconds timeout) {
  auto self = shared_from_this();
  auto task = [](std::shared_ptr<EnvoyLink> link,
                 std::chrono::milliseconds limit) -> Task<Result<void>> {
    if (link->initialized_) {
      co_return Result<void>{};
    }
    auto waiter = std::make_shared<PendingKv>(link->strand_);
    link->connected_waiters_.push_back(waiter);
    auto wait_op = waiter->wait(*link->options_.clock, link->options_.clock->steady_now() + limit);
    co_await std::move(wait_op);
    if (waiter->done && waiter->result && *waiter->result) {
      co_return Result<void>{};
    }
    if (waiter->done && waiter->result) {
      co_return fail(waiter->result->error());
    }
    std::erase(link->connected_waiters_, waiter);
    co_return fail(link->last_error_.value_or(
        link_error("connect_timeout", "The engine did not accept the envoy connection in time")));
  };
  auto op = asio::co_spawn(strand_, task(self, timeout), asio::use_awaitable);
  co_return co_await std::move(op);
}

envoy::ProtocolMetadata EnvoyLink::metadata() const {
  return metadata_;
}
bool EnvoyLink::connected() const {
  return initialized_;
}

// ---- connection loop --------------------------------------------------------------------------

Task<void> EnvoyLink::run() {
  auto self = shared_from_this();
  std::mt19937_64 rng{std::random_device{}()};
  int attempt = 0;
  while (!stopped_) {
    net::WsConnectOptions opts;
    opts.url = url();
    opts.subprotocols.push_back("rivet");
    if (options_.token) {
      opts.subprotocols.push_back("rivet_token." + *options_.token);
    }
    opts.timeout = std::chrono::milliseconds(10'000);
    auto connect_op = net::connect_websocket(strand_, std::move(opts));
    auto socket = co_await std::move(connect_op);
    bool evicted = false;
    if (socket && !stopped_) {
      const auto connected_at = options_.clock->steady_now();
      socket_ = *socket;
      initialized_ = false;
      // The first message on every connection (§1.8).
      envoy::ToRivetMetadata meta;
      meta.prepopulate_actor_names.emplace();
      for (const auto& name : options_.actor_names) {
        meta.prepopulate_actor_names->emplace_back(name, envoy::ActorName{"{}"});
      }
      meta.metadata = R"({"rivetkit":{"version":"2.3.19"},"runtime":"rivetkit-cpp"})";
      socket_->send(net::WsMessage{true, envoy::encode(envoy::ToRivet{std::move(meta)})});
      auto read_op = read_loop(socket_);
      co_await std::move(read_op);
      auto info = socket_->close_info();
      socket_.reset();
      initialized_ = false;
      ++disconnect_epoch_;
      for (auto& [id, p] : kv_pending_) {
        p->sent_on_current = false;
      }
      evicted = info.reason.rfind("ws.eviction", 0) == 0;
      last_error_ = link_error("disconnected", "The engine closed the envoy connection: "
                                                   + std::to_string(info.code) + " " + info.reason);
      if (!stopped_) {
        log::warn("engine connection closed ({} {}){}", info.code, info.reason,
                  evicted ? ": evicted, not reconnecting" : "; reconnecting");
      }
      if (options_.clock->steady_now() - connected_at >= std::chrono::seconds(60)) {
        attempt = 0;
      }
    } else if (!socket) {
      last_error_ = socket.error();
      log::warn("could not connect to the engine at {}: {}", options_.endpoint,
                socket.error().message);
    }
    if (stopped_) {
      break;
    }
    if (evicted) {
      stopped_ = true;
      fail_pending_kv(link_error("evicted", "This envoy was evicted by the engine"));
      if (handler_ != nullptr) {
        handler_->on_evicted();
      }
      break;
    }
    if (ever_initialized_) {
      start_lost_timer();
    }
    // Backoff: min(1 s * 2^attempt, 30 s) * (1 + U[0, 0.25)).
    double base = std::min(1000.0 * static_cast<double>(1ULL << std::min(attempt, 5)), 30'000.0);
    double jitter = std::uniform_real_distribution<double>(0.0, 0.25)(rng);
    ++attempt;
    auto backoff_op =
        options_.clock->wait_for(util::Millis(static_cast<long>(base * (1.0 + jitter))));
    co_await std::move(backoff_op);
  }
  socket_.reset();
}

Task<void> EnvoyLink::read_loop(std::shared_ptr<net::WebSocket> socket) {
  while (true) {
    auto receive_op = socket->receive();
    auto msg = co_await std::move(receive_op);
    if (!msg) {
      co_return;
    }
    if (!msg->binary) {
      continue;  // the engine only sends binary frames; text is ignored as the engine does
    }
    auto decoded = envoy::decode_to_envoy(msg->data);
    if (!decoded) {
      log::warn("undecodable message from the engine ({} bytes): {}", msg->data.size(),
                decoded.error().message);
      continue;
    }
    on_message(*decoded);
  }
}

void EnvoyLink::on_message(const envoy::ToEnvoy& message) {
  std::visit(
      [this](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, envoy::ToEnvoyPing>) {
          // Answered from the reader, never behind actor work (§1.6).
          write(envoy::ToRivet{envoy::ToRivetPong{m.ts}});
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyInit>) {
          on_init(m);
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyCommands>) {
          on_commands(m);
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyAckEvents>) {
          on_ack_events(m);
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyKvResponse>) {
          on_kv_response(m);
        } else if constexpr (std::is_same_v<T, envoy::ToEnvoyTunnelMessage>) {
          if (handler_ != nullptr) {
            handler_->on_tunnel(m);
          }
        } else {
          log::debug("ignoring an SQLite response from the engine (not used)");
        }
      },
      message);
}

void EnvoyLink::on_init(const envoy::ToEnvoyInit& init) {
  metadata_ = init.metadata;
  initialized_ = true;
  ever_initialized_ = true;
  lost_ = false;
  // Everything the engine may have missed: the unacknowledged event history, KV requests not
  // answered on the previous socket, tunnel messages queued while disconnected.
  envoy::ToRivetEvents resend;
  prune_history();
  for (const auto& [key, h] : history_) {
    for (const auto& e : h.events) {
      resend.events.push_back(e);  // the engine drops what it already has (by index)
    }
  }
  if (!resend.events.empty()) {
    write(envoy::ToRivet{std::move(resend)});
  }
  for (auto& [id, p] : kv_pending_) {
    if (!p->sent_on_current) {
      p->sent_on_current = true;
      write(envoy::ToRivet{envoy::ToRivetKvRequest{p->actor_id, id, p->request}});
    }
  }
  auto queued = std::move(queued_);
  queued_.clear();
  for (auto& m : queued) {
    write(m);
  }
  for (auto& w : connected_waiters_) {
    w->complete(envoy::KvResponseData{envoy::KvPutResponse{}});
  }
  connected_waiters_.clear();
  log::info("connected to the engine at {} as envoy {} (pool {})", options_.endpoint,
            options_.envoy_key, options_.pool);
}

void EnvoyLink::deliver_commands(envoy::ToEnvoyCommands commands) {
  asio::post(strand_, [self = shared_from_this(), commands = std::move(commands)] {
    self->on_commands(commands);
  });
}

void EnvoyLink::on_commands(const envoy::ToEnvoyCommands& commands) {
  envoy::ToRivetAckCommands ack;
  std::vector<envoy::CommandWrapper> fresh;
  for (const auto& c : commands.commands) {
    GenKey key{c.checkpoint.actor_id, c.checkpoint.generation};
    auto it = last_command_.find(key);
    bool replay = it != last_command_.end() && c.checkpoint.index <= it->second;
    if (!replay) {
      // Older generations of this actor are over: their entries go.
      for (auto old = last_command_.lower_bound(GenKey{key.first, 0});
           old != last_command_.end() && old->first.first == key.first
           && old->first.second < key.second;) {
        old = last_command_.erase(old);
      }
      last_command_[key] = c.checkpoint.index;
      fresh.push_back(c);
    }
    // Acknowledge replays too: the engine keeps a command until it is acknowledged.
    ack.last_command_checkpoints.push_back(c.checkpoint);
  }
  if (!ack.last_command_checkpoints.empty()) {
    write(envoy::ToRivet{std::move(ack)});
  }
  if (!fresh.empty() && handler_ != nullptr) {
    handler_->on_commands(std::move(fresh));
  }
}

void EnvoyLink::prune_history() {
  // Long enough for an engine to restart and this link to reconnect and resend; short enough
  // that an envoy running millions of short generations holds only the recent ones.
  constexpr auto kKeepFinished = std::chrono::minutes(2);
  const auto now = options_.clock->steady_now();
  for (auto it = history_.begin(); it != history_.end();) {
    const auto& h = it->second;
    if (h.finished && (h.events.empty() || now - h.finished_at > kKeepFinished)) {
      last_command_.erase(it->first);
      it = history_.erase(it);
    } else {
      ++it;
    }
  }
}

void EnvoyLink::on_ack_events(const envoy::ToEnvoyAckEvents& ack) {
  for (const auto& cp : ack.last_event_checkpoints) {
    auto it = history_.find(GenKey{cp.actor_id, cp.generation});
    if (it == history_.end()) {
      continue;
    }
    std::erase_if(it->second.events,
                  [&](const envoy::EventWrapper& e) { return e.checkpoint.index <= cp.index; });
  }
}

void EnvoyLink::on_kv_response(const envoy::ToEnvoyKvResponse& response) {
  auto it = kv_pending_.find(response.request_id);
  if (it == kv_pending_.end()) {
    return;  // answered after a timeout
  }
  auto pending = it->second;
  kv_pending_.erase(it);
  if (const auto* err = std::get_if<envoy::KvErrorResponse>(&response.data)) {
    pending->complete(fail(link_error(
        "kv_error", "Engine KV " + kv_kind(pending->request) + " failed: " + err->message)));
  } else {
    pending->complete(response.data);
  }
}

void EnvoyLink::write(const envoy::ToRivet& message) {
  if (socket_) {
    socket_->send(net::WsMessage{true, envoy::encode(message)});
  }
}

void EnvoyLink::start_lost_timer() {
  // The engine declares this envoy's actors lost once its last ping is older than the threshold;
  // stop writing well before (its last ping may precede the disconnect by a ping interval), so
  // a stale instance can never write after the engine moved the actor (envoy-protocol.md §1.7).
  auto threshold = std::chrono::milliseconds(metadata_.envoy_lost_threshold);
  auto margin = std::min(threshold / 3, std::chrono::milliseconds(5'000));
  util::spawn(strand_, lose_after(shared_from_this(), threshold - margin, disconnect_epoch_),
              "envoy lost timer");
}

Task<void> EnvoyLink::lose_after(std::shared_ptr<EnvoyLink> self,
                                 util::Millis delay,
                                 std::uint64_t epoch) {
  auto wait_op = self->options_.clock->wait_for(delay);
  co_await std::move(wait_op);
  if (self->initialized_ || self->stopped_ || self->lost_ || epoch != self->disconnect_epoch_) {
    co_return;  // reconnected (or stopped) in time
  }
  self->lost_ = true;
  log::error(
      "the engine has been unreachable for longer than its lost threshold: stopping "
      "every actor here (the engine starts them elsewhere)");
  self->fail_pending_kv(link_error("engine_lost", "The engine is unreachable"));
  self->queued_.clear();
  for (auto& [key, h] : self->history_) {
    h.finished = true;
    h.events.clear();
  }
  if (self->handler_ != nullptr) {
    self->handler_->on_lost();
  }
}

void EnvoyLink::fail_pending_kv(const Error& error) {
  auto pending = std::move(kv_pending_);
  kv_pending_.clear();
  for (auto& [id, p] : pending) {
    p->complete(fail(error));
  }
}

// ---- sending ------------------------------------------------------------------------------------

void EnvoyLink::send(envoy::ToRivet message) {
  asio::post(strand_, [self = shared_from_this(), message = std::move(message)]() mutable {
    if (self->stopped_) {
      return;
    }
    if (self->initialized_) {
      self->write(message);
    } else if (!self->lost_) {
      self->queued_.push_back(std::move(message));
    }
  });
}

void EnvoyLink::send_event(std::string actor_id, std::uint32_t generation, envoy::Event event) {
  asio::post(strand_, [self = shared_from_this(), actor_id = std::move(actor_id), generation,
                       event = std::move(event)]() mutable {
    if (self->stopped_ && !self->socket_) {
      return;
    }
    auto& h = self->history_[GenKey{actor_id, generation}];
    envoy::EventWrapper wrapper{envoy::ActorCheckpoint{actor_id, generation, h.next_index++},
                                std::move(event)};
    h.events.push_back(wrapper);
    if (self->initialized_) {
      self->write(envoy::ToRivet{envoy::ToRivetEvents{{std::move(wrapper)}}});
    }
  });
}

void EnvoyLink::forget_generation(std::string actor_id, std::uint32_t generation) {
  asio::post(strand_, [self = shared_from_this(), actor_id = std::move(actor_id), generation] {
    GenKey key{actor_id, generation};
    auto it = self->history_.find(key);
    if (it != self->history_.end()) {
      it->second.finished = true;
      it->second.finished_at = self->options_.clock->steady_now();
    } else {
      self->last_command_.erase(key);
    }
    self->prune_history();
  });
}

Task<Result<envoy::KvResponseData>> EnvoyLink::kv(std::string actor_id,
                                                  envoy::KvRequestData request) {
  auto task = [](std::shared_ptr<EnvoyLink> self, std::string id,
                 envoy::KvRequestData req) -> Task<Result<envoy::KvResponseData>> {
    if (self->stopped_ || self->lost_) {
      co_return fail(link_error(self->stopped_ ? "stopped" : "engine_lost",
                                "The engine connection is not available"));
    }
    auto pending = std::make_shared<PendingKv>(self->strand_);
    pending->actor_id = std::move(id);
    pending->request = std::move(req);
    std::uint32_t request_id = self->next_kv_id_++;
    self->kv_pending_[request_id] = pending;
    if (self->initialized_) {
      pending->sent_on_current = true;
      self->write(
          envoy::ToRivet{envoy::ToRivetKvRequest{pending->actor_id, request_id, pending->request}});
    }
    auto wait_op = pending->wait(*self->options_.clock,
                                 self->options_.clock->steady_now() + self->options_.kv_timeout);
    co_await std::move(wait_op);
    if (!pending->done) {
      self->kv_pending_.erase(request_id);
      co_return fail(link_error("kv_timeout", "The engine did not answer a KV request in time"));
    }
    co_return std::move(*pending->result);
  };
  auto op =
      asio::co_spawn(strand_, task(shared_from_this(), std::move(actor_id), std::move(request)),
                     asio::use_awaitable);
  co_return co_await std::move(op);
}

}  // namespace rivetkit::engine
