#include "local/local_driver.hpp"

#include "core/errors.hpp"
#include "local/local_context.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"

#include <boost/asio/strand.hpp>

namespace rivetkit::local {

LocalDriver::LocalDriver(boost::asio::io_context& io, std::shared_ptr<LocalContext> ctx)
    : io_(io),
      ctx_(std::move(ctx)),
      caller_(ctx_->runtime,
              [ctx = ctx_](std::string actor_id,
                           net::HttpRequest request,
                           std::shared_ptr<net::WebSocket> socket) {
                return serve_actor_socket(ctx, std::move(actor_id), std::move(request),
                                          std::move(socket));
              }),
      client_(
          *ctx_->directory,
          caller_,
          [runtime = &ctx_->runtime](const std::string& name) {
            return runtime->definition(name) != nullptr;
          },
          ctx_->runtime.config().clock) {}

void LocalDriver::start() {
  ctx_->driver = this;
  std::weak_ptr<LocalDriver> weak = shared_from_this();
  ctx_->runtime.set_waker(
      [weak](std::string actor_id) { return wake_weak(weak, std::move(actor_id)); });
  alarms_ = std::make_shared<AlarmScheduler>(
      boost::asio::make_strand(io_), ctx_->runtime.config().clock,
      [weak, io = &io_](const std::string& actor_id) {
        if (auto self = weak.lock()) {
          util::spawn(io->get_executor(), wake_for_alarm(self, actor_id), "alarm wake");
        }
      });
  alarms_->start();
  util::spawn(io_.get_executor(), load_alarms(shared_from_this()), "load pending schedules");
}

void LocalDriver::stop_alarms() {
  if (alarms_) {
    alarms_->stop();
  }
}

// ---- what actors ask for ------------------------------------------------------------------------

void LocalDriver::request_sleep(const std::string& actor_id) {
  util::spawn(io_.get_executor(), sleep_actor(shared_from_this(), actor_id), "sleep actor");
}

// A sleeping actor costs only its rows on disk: its instance, its directory-cache entry and, in
// batches, the heap pages they used are given back.
Task<void> LocalDriver::sleep_actor(std::shared_ptr<LocalDriver> self, std::string actor_id) {
  auto op = self->ctx_->runtime.stop(actor_id, core::StopReason::kSleep);
  co_await std::move(op);
  self->ctx_->directory->forget_cached(actor_id);
  self->trimmer_.released();
}

void LocalDriver::request_destroy(const std::string& actor_id) {
  util::spawn(io_.get_executor(), destroy_actor(shared_from_this(), actor_id), "destroy actor");
}

Task<void> LocalDriver::destroy_actor(std::shared_ptr<LocalDriver> self, std::string actor_id) {
  auto op = self->ctx_->directory->destroy(actor_id);
  auto r = co_await std::move(op);
  if (!r) {
    log::error("destroy failed actor_id={}: {}", actor_id, r.error().message);
  }
}

void LocalDriver::alarm_changed(const std::string& actor_id, std::optional<std::int64_t> at_ms) {
  if (alarms_) {
    alarms_->set(actor_id, at_ms);
  }
}

std::shared_ptr<net::WebSocket> LocalDriver::hibernated_socket(
    const storage::PersistedConn& record) {
  return ctx_->sockets.find(record.conn_id);
}

// ---- waking -------------------------------------------------------------------------------------

Task<Result<void>> LocalDriver::wake(std::string actor_id) {
  auto op = acquire_actor_id(ctx_, std::move(actor_id));
  auto woken = co_await std::move(op);
  if (!woken) {
    co_return fail(woken.error());
  }
  co_return Result<void>{};
}

Task<Result<std::unique_ptr<storage::ActorStore>>> LocalDriver::storage_for(
    std::string actor_id, std::uint32_t /*generation*/) {
  // One process runs every actor here and a generation starts only after the previous one
  // stopped, so generations need no fence: each reads and writes the actor's rows.
  co_return ctx_->store->actor_store(actor_id);
}

Task<Result<void>> LocalDriver::wake_weak(std::weak_ptr<LocalDriver> weak, std::string actor_id) {
  auto self = weak.lock();
  if (!self) {
    co_return fail(Error{"actor", "stopping", "The server is stopping", std::nullopt, false});
  }
  auto op = self->wake(std::move(actor_id));
  co_return co_await std::move(op);
}

Task<void> LocalDriver::wake_for_alarm(std::shared_ptr<LocalDriver> self, std::string actor_id) {
  auto op = self->wake(actor_id);
  auto r = co_await std::move(op);
  if (!r && !self->ctx_->runtime.shutting_down()) {
    log::warn("alarm could not wake actor_id={}: {}", actor_id, r.error().message);
  }
}

Task<void> LocalDriver::load_alarms(std::shared_ptr<LocalDriver> self) {
  auto op = self->ctx_->store->pending_alarms();
  auto pending = co_await std::move(op);
  if (!pending) {
    log::error("could not load pending schedules: {}", pending.error().message);
    co_return;
  }
  for (auto& [actor_id, at] : *pending) {
    self->alarms_->set(actor_id, at);
  }
  if (!pending->empty()) {
    log::info("{} actor(s) have pending schedules", pending->size());
  }
}

}  // namespace rivetkit::local
