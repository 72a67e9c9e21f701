#pragma once
// RecentStops: which generation of an actor stopped in this process a moment ago.
//
// The engine's gateway sends a request to the envoy that runs the actor and, if that actor stops
// before answering, sends the same request again once the actor runs anew (its
// actor_stopped_while_waiting retry). A request can be on its way while the actor stops here, so
// it arrives for an actor that is no longer here: answering it from the next generation (waking
// the actor) would run it twice. A request for an actor that stopped here within `window` is
// therefore left to the gateway's retry. Entries older than the window, or beyond `max_entries`
// (oldest first), are forgotten: the memory stays bounded however many actors sleep.

#include "util/clock.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

namespace rivetkit::engine {

class RecentStops {
 public:
  RecentStops(std::chrono::milliseconds window, std::size_t max_entries);

  /// Generation `generation` of `actor_id` stopped here at `now`.
  void stopped(const std::string& actor_id, std::uint32_t generation, util::SteadyTime now);
  /// The generation of `actor_id` that stopped here within the window before `now`, if any.
  std::optional<std::uint32_t> find(const std::string& actor_id, util::SteadyTime now);
  /// `actor_id` runs here again: its stop no longer explains a request.
  void forget(const std::string& actor_id);

  std::size_t size() const { return latest_.size(); }

 private:
  struct Stop {
    std::uint32_t generation;
    util::SteadyTime at;
  };
  void expire(util::SteadyTime now);

  std::chrono::milliseconds window_;
  std::size_t max_entries_;
  std::unordered_map<std::string, Stop> latest_;
  // In stop order; an entry whose actor stopped again later (or was forgotten) is skipped when
  // it expires (its time no longer matches latest_).
  std::deque<std::pair<util::SteadyTime, std::string>> order_;
};

}  // namespace rivetkit::engine
