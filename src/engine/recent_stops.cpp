#include "engine/recent_stops.hpp"

namespace rivetkit::engine {

RecentStops::RecentStops(std::chrono::milliseconds window, std::size_t max_entries)
    : window_(window), max_entries_(max_entries) {}

void RecentStops::stopped(const std::string& actor_id,
                          std::uint32_t generation,
                          util::SteadyTime now) {
  expire(now);
  latest_[actor_id] = Stop{generation, now};
  order_.emplace_back(now, actor_id);
  while (latest_.size() > max_entries_ && !order_.empty()) {
    auto& [at, id] = order_.front();
    auto it = latest_.find(id);
    if (it != latest_.end() && it->second.at == at) {
      latest_.erase(it);
    }
    order_.pop_front();
  }
}

std::optional<std::uint32_t> RecentStops::find(const std::string& actor_id, util::SteadyTime now) {
  expire(now);
  auto it = latest_.find(actor_id);
  if (it == latest_.end()) {
    return std::nullopt;
  }
  return it->second.generation;
}

void RecentStops::forget(const std::string& actor_id) {
  latest_.erase(actor_id);
}

void RecentStops::expire(util::SteadyTime now) {
  // The deque also holds superseded entries; it is trimmed to the entries still in the window
  // (and to twice the map's bound, for actors that stop again and again within it).
  while (!order_.empty()
         && (now - order_.front().first > window_ || order_.size() > 2 * max_entries_ + 1)) {
    auto& [at, id] = order_.front();
    auto it = latest_.find(id);
    if (it != latest_.end() && it->second.at == at) {
      latest_.erase(it);
    }
    order_.pop_front();
  }
}

}  // namespace rivetkit::engine
