// RecentStops: a request that arrives for an actor that stopped here a moment ago is left to the
// gateway's retry; the record of stops forgets by age and by count.

#include "engine/recent_stops.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rivetkit::engine {
namespace {

using namespace std::chrono_literals;

const util::SteadyTime kT0{std::chrono::seconds(1000)};

TEST(RecentStops, RemembersTheLatestGenerationWithinTheWindow) {
  RecentStops stops(30s, 100);
  EXPECT_EQ(stops.find("a", kT0), std::nullopt);
  stops.stopped("a", 1, kT0);
  EXPECT_EQ(stops.find("a", kT0 + 1s), 1u);
  stops.stopped("a", 2, kT0 + 2s);
  EXPECT_EQ(stops.find("a", kT0 + 3s), 2u);
  EXPECT_EQ(stops.find("b", kT0 + 3s), std::nullopt);
}

TEST(RecentStops, ForgetsAfterTheWindow) {
  RecentStops stops(30s, 100);
  stops.stopped("a", 1, kT0);
  stops.stopped("b", 4, kT0 + 20s);
  EXPECT_EQ(stops.find("a", kT0 + 30s), 1u);
  EXPECT_EQ(stops.find("a", kT0 + 31s), std::nullopt);
  EXPECT_EQ(stops.find("b", kT0 + 31s), 4u);
  EXPECT_EQ(stops.size(), 1u);
  // A stop again later keeps the actor for a window from that stop, not the first.
  stops.stopped("b", 5, kT0 + 45s);
  EXPECT_EQ(stops.find("b", kT0 + 60s), 5u);
  EXPECT_EQ(stops.find("b", kT0 + 76s), std::nullopt);
  EXPECT_EQ(stops.size(), 0u);
}

TEST(RecentStops, AnActorRunningAgainIsForgotten) {
  RecentStops stops(30s, 100);
  stops.stopped("a", 1, kT0);
  stops.forget("a");
  EXPECT_EQ(stops.find("a", kT0 + 1s), std::nullopt);
}

TEST(RecentStops, StaysBoundedByCountOldestFirst) {
  RecentStops stops(1h, 3);
  for (int i = 0; i < 10; ++i) {
    stops.stopped("actor-" + std::to_string(i), 1, kT0 + std::chrono::milliseconds(i));
  }
  EXPECT_EQ(stops.size(), 3u);
  EXPECT_EQ(stops.find("actor-6", kT0 + 1s), std::nullopt);
  EXPECT_EQ(stops.find("actor-7", kT0 + 1s), 1u);
  EXPECT_EQ(stops.find("actor-9", kT0 + 1s), 1u);
  // One actor stopping over and over does not grow it either.
  for (std::uint32_t g = 2; g < 1000; ++g) {
    stops.stopped("actor-9", g, kT0 + 2s + std::chrono::milliseconds(g));
  }
  EXPECT_LE(stops.size(), 3u);
  EXPECT_EQ(stops.find("actor-9", kT0 + 3s), 999u);
}

}  // namespace
}  // namespace rivetkit::engine
