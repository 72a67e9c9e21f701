#include "core/runtime.hpp"

#include "core/errors.hpp"
#include "core/notifier.hpp"
#include "util/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace rivetkit::core {

namespace asio = boost::asio;

// The slot and how many callers hold it (a slot is dropped at sleep only when nobody does).
struct Runtime::Slot {
  Slot(std::string id, asio::any_io_executor strand, SlotHost& host)
      : actor(std::move(id), std::move(strand), host) {}
  ActorSlot actor;
  std::size_t users = 0;  // guarded by Runtime::mutex_
};

Runtime::Runtime(asio::io_context& io,
                 RuntimeConfig config,
                 std::vector<ActorDefinition> definitions)
    : io_(io), config_(std::move(config)) {
  for (auto& def : definitions) {
    definitions_[def.name()] = detail::Access::data(def);
  }
  // Every slot gets a strand. Asio's strand service hands each new strand one of its 193 shared
  // mutexes and allocates a mutex the first time it is handed out: during a burst of actor starts
  // those long-lived mutexes would land between the actors' memory and each pin a heap page
  // after the actors went to sleep (docs/memory.md). Creating strands now allocates them all
  // together, up front (the pick mixes in a counter: 2048 strands cover the 193 in practice).
  for (int i = 0; i < 2048; ++i) {
    (void)asio::make_strand(io_);
  }
}

Runtime::~Runtime() = default;

std::shared_ptr<const detail::ActorDefinitionData> Runtime::definition(
    std::string_view name) const {
  auto it = definitions_.find(name);
  return it == definitions_.end() ? nullptr : it->second;
}

std::vector<std::string> Runtime::actor_names() const {
  std::vector<std::string> out;
  for (const auto& [name, def] : definitions_) {
    out.push_back(name);
  }
  return out;
}

std::shared_ptr<Runtime::Slot> Runtime::slot_for(const std::string& actor_id, bool create) {
  std::lock_guard lock(mutex_);
  auto it = slots_.find(actor_id);
  if (it != slots_.end()) {
    ++it->second->users;
    return it->second;
  }
  if (!create || shutting_down_) {
    return nullptr;
  }
  auto slot =
      std::make_shared<Slot>(actor_id, asio::make_strand(io_), static_cast<SlotHost&>(*this));
  slot->users = 1;
  slots_.emplace(actor_id, slot);
  return slot;
}

void Runtime::release_user(const std::shared_ptr<Slot>& slot) {
  std::lock_guard lock(mutex_);
  --slot->users;
}

Task<Result<void>> Runtime::wake(std::string actor_id) {
  if (!waker_) {
    co_return fail(actor_not_found(actor_id));
  }
  auto op = waker_(std::move(actor_id));
  co_return co_await std::move(op);
}

Task<Result<std::shared_ptr<ActorInstance>>> Runtime::acquire(std::string actor_id,
                                                              SpecFactory make_spec) {
  auto slot = slot_for(actor_id, true);
  if (!slot) {
    co_return fail(Error{"actor", "stopping", "The runtime is shutting down", std::nullopt, false});
  }
  auto op = asio::co_spawn(slot->actor.strand(), slot->actor.start(std::move(make_spec)),
                           asio::use_awaitable);
  auto result = co_await std::move(op);
  release_user(slot);
  co_return result;
}

Task<Dispatched<Reply>> Runtime::dispatch(std::string actor_id,
                                          Command command,
                                          std::optional<std::uint32_t> generation) {
  auto slot = slot_for(actor_id, true);
  if (!slot) {
    co_return Dispatched<Reply>{
        fail(Error{"actor", "stopping", "The runtime is shutting down", std::nullopt, false}),
        nullptr};
  }
  auto op =
      asio::co_spawn(slot->actor.strand(), slot->actor.dispatch(std::move(command), generation),
                     asio::use_awaitable);
  auto result = co_await std::move(op);
  release_user(slot);
  co_return result;
}

Task<void> Runtime::stop(std::string actor_id, StopReason reason) {
  auto slot = slot_for(actor_id, reason == StopReason::kDestroy);
  if (!slot) {
    co_return;
  }
  auto op = asio::co_spawn(slot->actor.strand(), slot->actor.stop(reason), asio::use_awaitable);
  co_await std::move(op);
  std::lock_guard lock(mutex_);
  --slot->users;
  // A sleeping actor costs nothing in memory: the slot goes unless someone is waiting on it
  // (they will start the next instance in it). Destroyed slots stay until forget().
  if (reason == StopReason::kSleep && slot->users == 0) {
    auto it = slots_.find(actor_id);
    if (it != slots_.end() && it->second == slot) {
      slots_.erase(it);
    }
  }
}

void Runtime::forget(const std::string& actor_id) {
  std::lock_guard lock(mutex_);
  auto it = slots_.find(actor_id);
  if (it != slots_.end() && it->second->users == 0) {
    slots_.erase(it);
  }
}

bool Runtime::shutting_down() const {
  std::lock_guard lock(mutex_);
  return shutting_down_;
}

Task<void> Runtime::shutdown() {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mutex_);
    shutting_down_ = true;
    for (const auto& [id, slot] : slots_) {
      if (!slot->actor.destroyed()) {
        ids.push_back(id);
      }
    }
  }
  // All actors stop concurrently, each on its own strand, so one slow on_sleep does not delay
  // the others' grace periods. The join counts completions on a strand of its own. (Not Asio's
  // ranged parallel_group: with a multi-threaded executor it reads its operation list after the
  // last completion resumed the awaiting coroutine, which frees it; ASan reported it.)
  auto ex = co_await asio::this_coro::executor;
  if (!ids.empty()) {
    auto join = [](Runtime* self, asio::any_io_executor work, asio::any_io_executor strand,
                   std::vector<std::string> actor_ids) -> Task<void> {
      auto remaining = std::make_shared<std::size_t>(actor_ids.size());
      auto done = std::make_shared<Notifier>(strand);
      for (auto& id : actor_ids) {
        asio::co_spawn(work, self->stop(std::move(id), StopReason::kSleep),
                       [strand, remaining, done](std::exception_ptr e) {
                         if (e) {
                           log::error("actor stop failed during shutdown: {}",
                                      exception_message(e));
                         }
                         asio::post(strand, [remaining, done] {
                           if (--*remaining == 0) {
                             done->notify_all();
                           }
                         });
                       });
      }
      while (*remaining > 0) {
        co_await done->wait();
      }
    };
    auto strand = asio::make_strand(ex);
    co_await asio::co_spawn(strand, join(this, ex, strand, ids), asio::use_awaitable);
  }
  log::info("runtime stopped; {} actor instance(s) put to sleep", ids.size());
}

std::size_t Runtime::slot_count() const {
  std::lock_guard lock(mutex_);
  return slots_.size();
}

}  // namespace rivetkit::core
