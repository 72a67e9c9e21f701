#include "core/runtime.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/notifier.hpp"
#include "util/log.hpp"

namespace rivetkit::core {

namespace asio = boost::asio;

struct Runtime::Slot {
  explicit Slot(asio::any_io_executor ex) : strand(std::move(ex)), changed(strand) {}
  asio::any_io_executor strand;
  std::shared_ptr<ActorInstance> instance;
  bool starting = false;
  std::uint64_t attempts = 0;
  std::optional<Error> last_error;
  Notifier changed;
};

Runtime::Runtime(asio::io_context& io, RuntimeConfig config, std::vector<ActorDefinition> definitions)
    : io_(io), config_(config) {
  for (auto& def : definitions) {
    definitions_[def.name()] = def.data();
  }
}

Runtime::~Runtime() = default;

std::shared_ptr<const detail::ActorDefinitionData> Runtime::definition(std::string_view name) const {
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

std::shared_ptr<Runtime::Slot> Runtime::slot_for(const std::string& actor_id) {
  std::lock_guard lock(mutex_);
  if (shutting_down_) {
    return nullptr;
  }
  auto it = slots_.find(actor_id);
  if (it != slots_.end()) {
    return it->second;
  }
  auto slot = std::make_shared<Slot>(asio::make_strand(io_));
  slots_.emplace(actor_id, slot);
  return slot;
}

Task<Result<std::shared_ptr<ActorInstance>>> Runtime::acquire(std::string actor_id,
                                                              SpecFactory make_spec) {
  auto slot = slot_for(actor_id);
  if (!slot) {
    co_return fail(Error{"actor", "stopping", "The runtime is shutting down", std::nullopt, false});
  }
  auto task = acquire_on_slot(slot, std::move(make_spec), &config_);
  auto op = asio::co_spawn(slot->strand, std::move(task), asio::use_awaitable);
  co_return co_await std::move(op);
}

Task<Result<std::shared_ptr<ActorInstance>>> Runtime::acquire_on_slot(std::shared_ptr<Slot> slot,
                                                                      SpecFactory make_spec,
                                                                      const RuntimeConfig* config) {
  while (true) {
    if (slot->instance && slot->instance->lifecycle() == ActorInstance::Lifecycle::kStarted) {
      co_return slot->instance;
    }
    if (slot->starting) {
      std::uint64_t attempt = slot->attempts;
      co_await slot->changed.wait();
      if (slot->attempts != attempt && !slot->instance && slot->last_error) {
        co_return fail(*slot->last_error);
      }
      continue;
    }
    if (slot->instance) {
      // Stopping or stopped: this slot is being released; the caller may retry.
      co_return fail(Error{"actor", "stopping", "Actor stopping", std::nullopt, false});
    }
    slot->starting = true;
    auto spec_op = make_spec();
    auto spec = co_await std::move(spec_op);
    std::shared_ptr<ActorInstance> instance;
    Result<void> started;
    if (spec) {
      instance = std::make_shared<ActorInstance>(slot->strand, std::move(*spec), *config);
      auto start_op = instance->start();
      started = co_await std::move(start_op);
    } else {
      started = fail(spec.error());
    }
    slot->starting = false;
    ++slot->attempts;
    if (!started) {
      slot->last_error = started.error();
      slot->changed.notify_all();
      co_return fail(started.error());
    }
    slot->last_error.reset();
    slot->instance = instance;
    slot->changed.notify_all();
    co_return instance;
  }
}

namespace {
Task<void> stop_slot_instance(std::shared_ptr<ActorInstance> instance) {
  if (instance && instance->lifecycle() == ActorInstance::Lifecycle::kStarted) {
    auto op = instance->stop();
    co_await std::move(op);
  }
}
}  // namespace

Task<void> Runtime::release(std::string actor_id) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mutex_);
    auto it = slots_.find(actor_id);
    if (it == slots_.end()) {
      co_return;
    }
    slot = it->second;
    slots_.erase(it);
  }
  auto task = stop_slot_instance(slot->instance);
  auto op = asio::co_spawn(slot->strand, std::move(task), asio::use_awaitable);
  co_await std::move(op);
}

Task<void> Runtime::shutdown() {
  std::map<std::string, std::shared_ptr<Slot>, std::less<>> slots;
  {
    std::lock_guard lock(mutex_);
    shutting_down_ = true;
    slots = std::move(slots_);
    slots_.clear();
  }
  for (auto& [id, slot] : slots) {
    auto task = stop_slot_instance(slot->instance);
    auto op = asio::co_spawn(slot->strand, std::move(task), asio::use_awaitable);
    co_await std::move(op);
  }
  log::info("runtime stopped; {} actor instance(s) saved", slots.size());
}

std::size_t Runtime::running_count() const {
  std::lock_guard lock(mutex_);
  return slots_.size();
}

}  // namespace rivetkit::core
