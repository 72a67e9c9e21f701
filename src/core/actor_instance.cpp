#include "core/actor_instance.hpp"

#include <rivetkit/convert.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

#include "core/errors.hpp"
#include "core/ids.hpp"
#include "core/keys.hpp"
#include "protocol/cbor/cbor.hpp"
#include "protocol/compat.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"

namespace rivetkit::core {

namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

// Runs one user hook, turning whatever it throws into an Error.
Task<Result<void>> guarded(std::string what, std::string actor_id, Task<void> task) {
  std::exception_ptr failure;
  try {
    co_await std::move(task);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    Error e = error_from_exception(failure);
    log::warn("hook failed actor_id={} hook={} error={}.{} message={}", actor_id, what, e.group,
              e.code, e.message);
    co_return fail(std::move(e));
  }
  co_return Result<void>{};
}

Result<Value> decode_stored(const std::string& bytes) {
  auto raw = protocol::cbor_decode(bytes);
  if (!raw) {
    return fail(raw.error());
  }
  return protocol::compat_decode(*raw);
}

}  // namespace

ActorInstance::ActorInstance(asio::any_io_executor strand, Spec spec, const RuntimeConfig& config)
    : strand_(std::move(strand)),
      actor_id_(std::move(spec.actor_id)),
      name_(std::move(spec.name)),
      key_(std::move(spec.key)),
      key_string_(serialize_key(key_)),
      generation_(spec.generation),
      definition_(std::move(spec.definition)),
      store_(std::move(spec.store)),
      config_(config),
      durability_(strand_) {
  data_ = definition_->hooks.make_data();
}

ActorInstance::~ActorInstance() = default;

Task<Result<void>> ActorInstance::start() {
  const auto& hooks = definition_->hooks;
  auto load_op = store_->load();
  auto loaded = co_await std::move(load_op);
  if (!loaded) {
    lifecycle_ = Lifecycle::kFailed;
    co_return fail(loaded.error());
  }

  Value input;
  if (loaded->input) {
    auto decoded = decode_stored(*loaded->input);
    if (!decoded) {
      lifecycle_ = Lifecycle::kFailed;
      co_return fail(decoded.error());
    }
    input = std::move(*decoded);
  }

  if (!loaded->has_initialized) {
    // A new actor: its state is created and committed as initialized before anything can see it,
    // so a crash before this point simply re-runs creation (the TS adapter's manual startup).
    if (hooks.create_state) {
      auto task = hooks.create_state(this, input);
      auto r = co_await guarded("createState", actor_id_, std::move(task));
      if (!r) {
        lifecycle_ = Lifecycle::kFailed;
        co_return fail(r.error());
      }
    }
    if (hooks.on_create) {
      auto task = hooks.on_create(this, input);
      auto r = co_await guarded("onCreate", actor_id_, std::move(task));
      if (!r) {
        lifecycle_ = Lifecycle::kFailed;
        co_return fail(r.error());
      }
    }
    std::string bytes = protocol::cbor_encode(data_->state_to_value());
    storage::ActorWrite write;
    write.state = bytes;
    write.has_initialized = true;
    auto commit_op = store_->commit(std::move(write));
    auto committed = co_await std::move(commit_op);
    if (!committed) {
      lifecycle_ = Lifecycle::kFailed;
      co_return fail(committed.error());
    }
    last_saved_ = std::move(bytes);
  } else if (loaded->state) {
    auto decoded = decode_stored(*loaded->state);
    if (!decoded) {
      lifecycle_ = Lifecycle::kFailed;
      co_return fail(decoded.error());
    }
    try {
      data_->state_from_value(*decoded);
    } catch (const ConversionError& e) {
      lifecycle_ = Lifecycle::kFailed;
      log::error("stored state does not fit the state type actor_id={} error={}", actor_id_,
                 e.what());
      co_return fail(internal_error());
    }
    last_saved_ = *loaded->state;
  }
  dirty_ = false;

  if (hooks.create_vars) {
    auto task = hooks.create_vars(this);
    auto r = co_await guarded("createVars", actor_id_, std::move(task));
    if (!r) {
      lifecycle_ = Lifecycle::kFailed;
      co_return fail(r.error());
    }
  }
  if (hooks.on_wake) {
    auto task = hooks.on_wake(this);
    auto r = co_await guarded("onWake", actor_id_, std::move(task));
    if (!r) {
      lifecycle_ = Lifecycle::kFailed;
      co_return fail(r.error());
    }
  }
  lifecycle_ = Lifecycle::kStarted;
  checkpoint();
  log::debug("actor started actor_id={} name={} generation={}", actor_id_, name_, generation_);
  co_return Result<void>{};
}

Task<void> ActorInstance::stop() {
  lifecycle_ = Lifecycle::kStopping;
  std::uint64_t seq = checkpoint();
  auto wait_op = wait_durable(seq);
  auto r = co_await std::move(wait_op);
  if (!r) {
    log::error("final save failed actor_id={}: {}", actor_id_, r.error().message);
  }
  for (auto& [id, conn] : connections_) {
    conn->close(1001, "actor.stopped");
  }
  lifecycle_ = Lifecycle::kStopped;
}

// ---- connections ------------------------------------------------------------------------------

Task<Result<std::shared_ptr<Connection>>> ActorInstance::open_connection(
    ConnKind kind, Value params, Request request, protocol::client::Encoding encoding,
    std::shared_ptr<net::WebSocket> transport) {
  auto self = shared_from_this();
  const auto& hooks = definition_->hooks;
  auto conn = std::make_shared<Connection>(*this, new_uuid_v4(), kind, params, std::move(request),
                                           encoding, std::move(transport));
  if (hooks.on_before_connect) {
    auto task = hooks.on_before_connect(this, params, &conn->request());
    auto r = co_await guarded("onBeforeConnect", actor_id_, std::move(task));
    if (!r) {
      co_return fail(r.error());
    }
  }
  {
    std::exception_ptr failure;
    try {
      auto task = hooks.create_conn_data(this, params, &conn->request());
      auto data = co_await std::move(task);
      conn->set_user_data(std::move(data));
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      co_return fail(error_from_exception(failure));
    }
  }
  connections_[conn->id()] = conn;
  if (hooks.on_connect) {
    auto task = hooks.on_connect(this, conn.get());
    auto r = co_await guarded("onConnect", actor_id_, std::move(task));
    if (!r) {
      connections_.erase(conn->id());
      co_return fail(r.error());
    }
  }
  co_return conn;
}

Task<void> ActorInstance::close_connection(std::shared_ptr<Connection> conn) {
  auto self = shared_from_this();
  auto it = connections_.find(conn->id());
  if (it == connections_.end()) {
    co_return;  // already removed: exactly one on_disconnect per connection
  }
  connections_.erase(it);
  if (definition_->hooks.on_disconnect) {
    auto task = definition_->hooks.on_disconnect(this, conn.get());
    co_await guarded("onDisconnect", actor_id_, std::move(task));
  }
}

// ---- actions and outputs ----------------------------------------------------------------------

namespace {

// Runs the user's action and catches whatever it throws, so the race against the timeout below
// ends as soon as the action ends, successfully or not (awaitable_operators' `||` waits for the
// first *successful* operation, so a throwing operand would otherwise wait for the timer).
Task<Result<Value>> catching(Task<Value> action) {
  std::exception_ptr failure;
  try {
    Value v = co_await std::move(action);
    co_return v;
  } catch (...) {
    failure = std::current_exception();
  }
  co_return fail(error_from_exception(failure));
}

}  // namespace

Task<Result<Value>> ActorInstance::run_action(Connection* conn, std::string name, Array args) {
  auto self = shared_from_this();
  auto it = definition_->hooks.actions.find(name);
  if (it == definition_->hooks.actions.end()) {
    co_return fail(action_not_found(name));
  }
  asio::steady_timer timer(strand_, definition_->options.action_timeout);
  auto action = catching(it->second(this, conn, std::move(args)));
  auto timeout = timer.async_wait(asio::as_tuple(asio::use_awaitable));
  auto raced = co_await (std::move(action) || std::move(timeout));
  if (raced.index() == 1) {
    log::warn("action timed out actor_id={} action={}", actor_id_, name);
    co_return fail(action_timed_out());
  }
  Result<Value> result = std::move(std::get<0>(raced));
  if (!result && !result.error().is_public) {
    log::warn("action failed actor_id={} action={} error={}.{}", actor_id_, name,
              result.error().group, result.error().code);
  }
  co_return result;
}

void ActorInstance::mark_state_dirty() {
  dirty_ = true;
  if (save_posted_) {
    return;
  }
  save_posted_ = true;
  // Runs after the current handler yields, i.e. after the mutation the caller is about to make.
  asio::post(strand_, [self = shared_from_this()] {
    self->save_posted_ = false;
    self->checkpoint();
  });
}

std::uint64_t ActorInstance::checkpoint() {
  if (dirty_ && lifecycle_ != Lifecycle::kLoading && lifecycle_ != Lifecycle::kFailed) {
    dirty_ = false;
    std::optional<std::string> bytes;
    try {
      bytes = protocol::cbor_encode(data_->state_to_value());
    } catch (const std::exception& e) {
      log::error("state serialization failed actor_id={}: {}", actor_id_, e.what());
    }
    if (bytes && (!last_saved_ || *last_saved_ != *bytes)) {
      last_saved_ = *bytes;
      std::uint64_t seq = ++requested_seq_;
      ++commits_in_flight_;
      util::spawn(strand_, commit_state(seq, std::move(*bytes)), "commit actor state");
      if (definition_->hooks.on_state_change) {
        try {
          definition_->hooks.on_state_change(this);
        } catch (const std::exception& e) {
          log::warn("onStateChange failed actor_id={}: {}", actor_id_, e.what());
        }
      }
    }
  }
  return definition_->options.durable_replies ? requested_seq_ : 0;
}

Task<void> ActorInstance::commit_state(std::uint64_t seq, std::string bytes) {
  auto self = shared_from_this();
  storage::ActorWrite write;
  write.state = std::move(bytes);
  auto op = store_->commit(std::move(write));
  auto r = co_await std::move(op);
  --commits_in_flight_;
  if (r) {
    durable_seq_ = std::max(durable_seq_, seq);
  } else {
    log::error("state save failed actor_id={} seq={}: {}", actor_id_, seq, r.error().message);
    failed_seq_ = std::max(failed_seq_, seq);
    // Retry with the next checkpoint: the state is whole-written, so any later success covers it.
    last_saved_.reset();
    dirty_ = true;
  }
  on_durable_progress();
}

void ActorInstance::on_durable_progress() {
  bool failed = failed_seq_ > durable_seq_ && commits_in_flight_ == 0;
  for (auto& [id, conn] : connections_) {
    conn->release(durable_seq_);
    if (failed) {
      conn->fail_pending(failed_seq_);
    }
  }
  durability_.notify_all();
}

Task<Result<void>> ActorInstance::wait_durable(std::uint64_t seq) {
  auto self = shared_from_this();
  while (true) {
    if (seq == 0 || durable_seq_ >= seq) {
      co_return Result<void>{};
    }
    if (failed_seq_ >= seq && commits_in_flight_ == 0) {
      co_return fail(Error{"actor", "state_save_failed", "The actor state could not be saved",
                           std::nullopt, false});
    }
    co_await durability_.wait();
  }
}

void ActorInstance::send_message(Connection& conn, const protocol::client::ToClient& msg) {
  send_frame(conn, net::WsMessage{!protocol::client::is_text(conn.encoding()),
                                  protocol::client::encode_to_client(conn.encoding(), msg)});
}

void ActorInstance::send_frame(Connection& conn, net::WsMessage frame) {
  std::uint64_t seq = checkpoint();
  conn.enqueue(std::move(frame), seq);
}

protocol::client::ActorSpecifier ActorInstance::specifier() const {
  return protocol::client::ActorSpecifier{actor_id_, generation_, key_string_};
}

void ActorInstance::send_event(Connection& conn, const std::string& name, const Array& args) {
  if (conn.kind() != ConnKind::kActorConnect || conn.closed()) {
    return;
  }
  net::WsMessage frame{!protocol::client::is_text(conn.encoding()),
                      protocol::client::encode_to_client(
                          conn.encoding(),
                          protocol::client::ToClient{protocol::client::Event{name, args}})};
  if (frame.data.size() > config_.max_outgoing_message_size) {
    conn.close(1011, "message.outgoing_too_long");
    return;
  }
  std::uint64_t seq = checkpoint();
  conn.enqueue(std::move(frame), seq);
}

void ActorInstance::broadcast(std::string event, Array args) {
  // Encode once per encoding in use.
  std::optional<net::WsMessage> frames[3];
  std::uint64_t seq = checkpoint();
  std::vector<std::shared_ptr<Connection>> too_long;
  for (auto& [id, conn] : connections_) {
    if (conn->kind() != ConnKind::kActorConnect || conn->closed() || !conn->subscribed(event)) {
      continue;
    }
    auto& frame = frames[static_cast<int>(conn->encoding())];
    if (!frame) {
      frame = net::WsMessage{!protocol::client::is_text(conn->encoding()),
                             protocol::client::encode_to_client(
                                 conn->encoding(),
                                 protocol::client::ToClient{protocol::client::Event{event, args}})};
    }
    if (frame->data.size() > config_.max_outgoing_message_size) {
      too_long.push_back(conn);
      continue;
    }
    conn->enqueue(*frame, seq);
  }
  for (auto& conn : too_long) {
    conn->close(1011, "message.outgoing_too_long");
  }
}

std::vector<detail::ConnApi*> ActorInstance::conns() {
  std::vector<detail::ConnApi*> out;
  out.reserve(connections_.size());
  for (auto& [id, conn] : connections_) {
    out.push_back(conn.get());
  }
  return out;
}

Task<void> ActorInstance::save_state() {
  auto self = shared_from_this();
  dirty_ = true;
  std::uint64_t seq = checkpoint();
  auto op = wait_durable(seq == 0 ? requested_seq_ : seq);
  auto r = co_await std::move(op);
  if (!r) {
    throw ActorError(r.error());
  }
}

Task<void> ActorInstance::wait_for(std::chrono::milliseconds duration) {
  asio::steady_timer timer(strand_, duration);
  co_await timer.async_wait(asio::use_awaitable);
}

void ActorInstance::sleep() {
  log::info("sleep requested actor_id={} (sleep arrives with the lifecycle work)", actor_id_);
}

void ActorInstance::destroy() {
  log::info("destroy requested actor_id={} (destroy arrives with the lifecycle work)", actor_id_);
}

}  // namespace rivetkit::core
