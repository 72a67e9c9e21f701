#include "core/actor/abort_signal.hpp"

#include "util/log.hpp"

#include <boost/asio/post.hpp>

#include <exception>

namespace rivetkit::core {

AbortSignal::AbortSignal(boost::asio::any_io_executor strand, std::string actor_id)
    : strand_(std::move(strand)), actor_id_(std::move(actor_id)) {}

void AbortSignal::add(std::function<void()> listener, std::shared_ptr<void> hold) {
  if (!listener) {
    return;
  }
  Listener entry{std::move(listener), false, {}};
  if (!fired_) {
    listeners_.push_back(std::move(entry));
    return;
  }
  boost::asio::post(strand_,
                    [this, hold = std::move(hold), entry = std::move(entry)] { run(entry); });
}

void AbortSignal::add_owned(std::weak_ptr<void> owner,
                            std::function<void()> listener,
                            std::shared_ptr<void> hold) {
  if (!listener) {
    return;
  }
  std::erase_if(listeners_, [](const Listener& l) { return l.owned && l.owner.expired(); });
  Listener entry{std::move(listener), true, std::move(owner)};
  if (!fired_) {
    listeners_.push_back(std::move(entry));
    return;
  }
  boost::asio::post(strand_,
                    [this, hold = std::move(hold), entry = std::move(entry)] { run(entry); });
}

void AbortSignal::fire() {
  if (fired_) {
    return;
  }
  fired_ = true;
  auto listeners = std::move(listeners_);
  listeners_.clear();
  for (const auto& listener : listeners) {
    run(listener);
  }
}

void AbortSignal::run(const Listener& listener) const {
  if (listener.owned && listener.owner.expired()) {
    return;
  }
  try {
    listener.run();
  } catch (const std::exception& e) {
    log::warn("abort listener failed actor_id={}: {}", actor_id_, e.what());
  } catch (...) {
    log::warn("abort listener failed actor_id={}: a non-standard exception", actor_id_);
  }
}

}  // namespace rivetkit::core
