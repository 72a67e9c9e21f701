// The output gate alone, on a single-threaded io_context, with a source whose writes complete
// only when the test says so: one write in flight, changes made meanwhile coalesce into the
// next write, a failure fails that write and everything after it, waiters resume in order;
// holds keep writes back until they end, their deadline passes or end_holds().

#include "core/actor/output_gate.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;

// Changes are numbers; a write carries the numbers changed since the last one.
class FakeSource final : public OutputGate::Source {
 public:
  explicit FakeSource(asio::io_context& io) : io_(io) {}

  OutputGate* gate = nullptr;
  bool writable = true;
  bool gating = true;
  std::vector<int> changes;
  std::vector<std::vector<int>> taken;  // what each write carried, in order
  int started = 0;
  int durable_calls = 0;
  std::vector<std::uint64_t> durable_seen;  // gate->durable() at each progress
  std::optional<std::uint64_t> failed_write;
  std::function<void()> on_started;

  void change(int n) {
    changes.push_back(n);
    gate->mark_changed();
  }

  bool can_write() const override { return writable; }
  std::optional<OutputGate::Write> take_write() override {
    if (changes.empty()) {
      return std::nullopt;
    }
    taken.push_back(std::move(changes));
    changes.clear();
    OutputGate::Write w;
    w.commit = commit();
    w.gating = gating;
    w.started = [this] {
      ++started;
      if (on_started) {
        on_started();
      }
    };
    return w;
  }
  void write_durable() override { ++durable_calls; }
  void outputs_progressed() override { durable_seen.push_back(gate->durable()); }
  void write_failed(std::uint64_t seq, const Error&) override { failed_write = seq; }

  std::size_t in_flight() const { return pending_.size(); }
  void complete(bool ok) {
    ASSERT_FALSE(pending_.empty());
    auto done = std::move(pending_.front());
    pending_.pop_front();
    done(ok ? Result<void>{}
            : fail(Error{"storage", "sqlite_error", "disk full", std::nullopt, false}));
  }

 private:
  Task<Result<void>> commit() {
    auto op = asio::async_initiate<decltype(asio::use_awaitable), void(Result<void>)>(
        [this](auto handler) {
          auto h = std::make_shared<decltype(handler)>(std::move(handler));
          pending_.push_back([this, h](Result<void> r) {
            asio::post(io_, [h, r = std::move(r)]() mutable { (*h)(std::move(r)); });
          });
        },
        asio::use_awaitable);
    co_return co_await std::move(op);
  }

  asio::io_context& io_;
  std::deque<std::function<void(Result<void>)>> pending_;
};

class OutputGateTest : public ::testing::Test {
 protected:
  void make(bool gate_outputs = true) {
    gate.emplace(io.get_executor(), source, gate_outputs);
    source.gate = &*gate;
  }
  void settle() {
    io.restart();
    io.poll();
  }
  // Starts a wait; its outcome lands in `outcomes` (seq, ok) when it resumes.
  void wait_for(std::uint64_t seq) {
    asio::co_spawn(
        io,
        [this, seq]() -> Task<void> {
          auto r = co_await gate->wait(seq);
          outcomes.emplace_back(seq, static_cast<bool>(r));
        },
        [](std::exception_ptr e) {
          if (e) {
            std::rethrow_exception(e);
          }
        });
  }

  asio::io_context io;
  FakeSource source{io};
  std::optional<OutputGate> gate;
  std::vector<std::pair<std::uint64_t, bool>> outcomes;
};

TEST_F(OutputGateTest, NothingChangedWritesNothing) {
  make();
  EXPECT_EQ(gate->checkpoint(), 0u);
  settle();
  EXPECT_TRUE(source.taken.empty());
  wait_for(0);
  settle();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].second);
}

TEST_F(OutputGateTest, OneWriteInFlightAndChangesMeanwhileCoalesce) {
  make();
  EXPECT_FALSE(gate->holds_outputs());
  source.change(1);
  EXPECT_EQ(gate->checkpoint(), 1u);
  EXPECT_TRUE(gate->holds_outputs());
  settle();
  EXPECT_EQ(source.in_flight(), 1u);
  EXPECT_TRUE(gate->busy());

  // While write 1 is under way, two more changes: both get number 2, and nothing is written.
  source.change(2);
  EXPECT_EQ(gate->checkpoint(), 2u);
  source.change(3);
  EXPECT_EQ(gate->checkpoint(), 2u);
  EXPECT_EQ(gate->latest(), 2u);
  settle();
  EXPECT_EQ(source.in_flight(), 1u);
  ASSERT_EQ(source.taken.size(), 1u);

  source.complete(true);
  settle();
  EXPECT_EQ(gate->durable(), 1u);
  // The changes that waited went as one write.
  ASSERT_EQ(source.taken.size(), 2u);
  EXPECT_EQ(source.taken[1], (std::vector<int>{2, 3}));
  EXPECT_EQ(source.in_flight(), 1u);

  source.complete(true);
  settle();
  EXPECT_EQ(gate->durable(), 2u);
  EXPECT_FALSE(gate->busy());
  EXPECT_FALSE(gate->holds_outputs());
  EXPECT_EQ(source.durable_calls, 2);
  EXPECT_EQ(source.started, 2);
}

TEST_F(OutputGateTest, WaitersResumeInSequenceOrder) {
  make();
  source.change(1);
  gate->checkpoint();
  source.change(2);
  gate->checkpoint();
  wait_for(2);
  wait_for(1);
  settle();
  EXPECT_TRUE(outcomes.empty());

  source.complete(true);
  settle();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0], std::make_pair(std::uint64_t{1}, true));

  source.complete(true);
  settle();
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[1], std::make_pair(std::uint64_t{2}, true));
  // The durable number the outputs saw only ever grew.
  EXPECT_TRUE(std::is_sorted(source.durable_seen.begin(), source.durable_seen.end()));
  EXPECT_EQ(source.durable_seen.back(), 2u);
}

TEST_F(OutputGateTest, AFailureFailsThatWriteAndEveryLaterWaiter) {
  make();
  source.change(1);
  EXPECT_EQ(gate->checkpoint(), 1u);
  source.change(2);
  EXPECT_EQ(gate->checkpoint(), 2u);
  wait_for(1);
  wait_for(2);
  settle();

  source.complete(false);
  settle();
  EXPECT_TRUE(gate->broken());
  EXPECT_EQ(source.failed_write, 1u);
  EXPECT_EQ(gate->durable(), 0u);
  EXPECT_EQ(gate->failed(), 2u);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_FALSE(outcomes[0].second);
  EXPECT_FALSE(outcomes[1].second);

  // Broken for good: a later change is never written and what waits on it fails at once.
  source.change(3);
  const auto seq = gate->checkpoint();
  EXPECT_EQ(seq, 3u);
  wait_for(seq);
  settle();
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_FALSE(outcomes[2].second);
  EXPECT_EQ(source.taken.size(), 1u);
  EXPECT_EQ(source.in_flight(), 0u);
}

TEST_F(OutputGateTest, AFailureAfterASuccessKeepsWhatWasDurable) {
  make();
  source.change(1);
  gate->checkpoint();
  settle();
  source.complete(true);
  settle();
  source.change(2);
  gate->checkpoint();
  wait_for(1);
  wait_for(2);
  settle();
  source.complete(false);
  settle();
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0], std::make_pair(std::uint64_t{1}, true));
  EXPECT_EQ(outcomes[1], std::make_pair(std::uint64_t{2}, false));
  EXPECT_EQ(gate->durable(), 1u);
  EXPECT_EQ(gate->failed(), 2u);
}

TEST_F(OutputGateTest, AReservedWriteThatChangesNothingIsDurableWithTheOneBefore) {
  make();
  source.change(1);
  gate->checkpoint();
  // Marked, but the source has nothing to write when its turn comes (e.g. state set back).
  gate->mark_changed();
  EXPECT_EQ(gate->checkpoint(), 2u);
  wait_for(2);
  settle();
  source.complete(true);
  settle();
  EXPECT_EQ(gate->durable(), 2u);
  EXPECT_EQ(source.taken.size(), 1u);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].second);
}

TEST_F(OutputGateTest, AReservedWriteThatCanNoLongerBeWrittenFails) {
  make();
  source.change(1);
  gate->checkpoint();
  source.change(2);
  EXPECT_EQ(gate->checkpoint(), 2u);
  wait_for(2);
  settle();
  source.writable = false;  // the owner stopped meanwhile
  source.complete(true);
  settle();
  EXPECT_EQ(gate->durable(), 1u);
  EXPECT_EQ(gate->failed(), 2u);
  EXPECT_FALSE(gate->broken());
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].second);
}

TEST_F(OutputGateTest, ABookkeepingWriteHoldsNoOutputBack) {
  make();
  source.gating = false;
  source.change(1);
  EXPECT_EQ(gate->checkpoint(), 0u);
  EXPECT_FALSE(gate->holds_outputs());
  settle();
  EXPECT_EQ(source.in_flight(), 1u);
  EXPECT_EQ(gate->latest(), 1u);
  source.complete(true);
  settle();
  EXPECT_EQ(gate->durable(), 1u);
}

TEST_F(OutputGateTest, UngatedOutputsLeaveAtOnceButWritesStaySequenced) {
  make(false);
  source.change(1);
  EXPECT_EQ(gate->checkpoint(), 0u);
  source.change(2);
  EXPECT_EQ(gate->checkpoint(), 0u);
  settle();
  EXPECT_EQ(source.in_flight(), 1u);
  source.complete(true);
  settle();
  EXPECT_EQ(source.in_flight(), 1u);
  source.complete(true);
  settle();
  EXPECT_EQ(gate->durable(), 2u);
}

TEST_F(OutputGateTest, ACheckpointFromTheStartedHookQueuesBehindTheWrite) {
  make();
  // on_state_change may broadcast, which checkpoints: it must find the gate locked.
  source.on_started = [this] {
    source.on_started = nullptr;
    source.change(2);
    EXPECT_EQ(gate->checkpoint(), 2u);
  };
  source.change(1);
  gate->checkpoint();
  settle();
  ASSERT_EQ(source.taken.size(), 1u);
  EXPECT_EQ(source.in_flight(), 1u);
  source.complete(true);
  settle();
  ASSERT_EQ(source.taken.size(), 2u);
  EXPECT_EQ(source.taken[1], std::vector<int>{2});
}

TEST_F(OutputGateTest, ChangesBeforeTheOwnerCanWriteWaitForIt) {
  make();
  source.writable = false;  // loading
  source.change(1);
  EXPECT_EQ(gate->checkpoint(), 0u);
  EXPECT_TRUE(gate->has_changes());
  source.writable = true;
  EXPECT_EQ(gate->checkpoint(), 1u);
  settle();
  EXPECT_EQ(source.in_flight(), 1u);
}

TEST_F(OutputGateTest, AHoldKeepsWritesBackUntilItEndsThenTheyGoAsOne) {
  make();
  auto hold = gate->hold_writes(std::chrono::steady_clock::now() + std::chrono::hours(1), nullptr);
  EXPECT_TRUE(gate->held());
  source.change(1);
  EXPECT_EQ(gate->checkpoint(), 1u) << "the number is reserved";
  source.change(2);
  EXPECT_EQ(gate->checkpoint(), 1u);
  wait_for(1);
  settle();
  EXPECT_TRUE(source.taken.empty()) << "nothing is written while held";
  EXPECT_TRUE(gate->holds_outputs());
  EXPECT_TRUE(outcomes.empty());

  hold.reset();
  settle();
  ASSERT_EQ(source.taken.size(), 1u);
  EXPECT_EQ(source.taken[0], (std::vector<int>{1, 2})) << "one write";
  source.complete(true);
  settle();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0], std::make_pair(std::uint64_t{1}, true));
  EXPECT_FALSE(gate->held());
}

TEST_F(OutputGateTest, AHoldDuringAWriteInFlightAndItsDeadline) {
  make();
  source.change(1);
  gate->checkpoint();
  settle();
  auto hold =
      gate->hold_writes(std::chrono::steady_clock::now() + std::chrono::milliseconds(20), nullptr);
  source.change(2);
  EXPECT_EQ(gate->checkpoint(), 2u);
  source.complete(true);
  settle();
  EXPECT_EQ(gate->durable(), 1u);
  EXPECT_EQ(source.taken.size(), 1u) << "write 2 waits for the hold, and is not failed";
  EXPECT_EQ(gate->latest(), 2u);
  // The deadline ends the hold though its token lives on.
  for (int i = 0; i < 200 && source.taken.size() < 2; ++i) {
    io.restart();
    io.run_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(source.taken.size(), 2u);
  EXPECT_EQ(source.taken[1], (std::vector<int>{2}));
  source.complete(true);
  settle();
  EXPECT_EQ(gate->durable(), 2u);
  hold.reset();  // ended already: a no-op
  settle();
  EXPECT_EQ(source.taken.size(), 2u);
}

TEST_F(OutputGateTest, EndHoldsWritesWhatWaitedAndLaterReleasesAreNoOps) {
  make();
  auto first = gate->hold_writes(std::chrono::steady_clock::now() + std::chrono::hours(1), nullptr);
  auto second =
      gate->hold_writes(std::chrono::steady_clock::now() + std::chrono::hours(1), nullptr);
  source.change(1);
  gate->checkpoint();
  first.reset();
  settle();
  EXPECT_TRUE(source.taken.empty()) << "still held by the second";
  gate->end_holds();
  EXPECT_FALSE(gate->held());
  EXPECT_EQ(source.taken.size(), 1u) << "written at once";
  settle();
  EXPECT_EQ(source.in_flight(), 1u);
  auto third = gate->hold_writes(std::chrono::steady_clock::now() + std::chrono::hours(1), nullptr);
  second.reset();  // from before end_holds(): must not end the third
  settle();
  EXPECT_TRUE(gate->held());
  source.complete(true);
  settle();
  source.change(2);
  gate->checkpoint();
  settle();
  EXPECT_EQ(source.taken.size(), 1u) << "the third hold still keeps writes back";
  third.reset();
  settle();
  EXPECT_EQ(source.taken.size(), 2u);
}

TEST_F(OutputGateTest, ChangesHeldWhenTheOwnerStopsFailInsteadOfHanging) {
  make();
  auto hold = gate->hold_writes(std::chrono::steady_clock::now() + std::chrono::hours(1), nullptr);
  source.change(1);
  gate->checkpoint();
  wait_for(1);
  source.writable = false;  // the owner stopped (a destroy: nothing more is written)
  gate->end_holds();
  settle();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].second);
}

}  // namespace
}  // namespace rivetkit::core
