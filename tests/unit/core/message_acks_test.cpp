// When inbound message indexes are saved, alone on a manual clock: they ride along with a write
// that holds outputs back, go alone after the delay (one save for a burst), go at once past the
// byte threshold, and hold a reply back when a write is already under way, unless a write that
// holds outputs back already carries the reply's index.

#include "core/actor/message_acks.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

class FakeHost final : public MessageAcks::Host {
 public:
  explicit FakeHost(asio::io_context& io) : io_(io) {}
  int saves = 0;
  bool pending = false;
  void acks_need_save() override { ++saves; }
  bool replies_held() const override { return pending; }
  void spawn_task(Task<void> task, const char*) override {
    asio::co_spawn(io_, std::move(task), [](std::exception_ptr e) {
      if (e) {
        std::rethrow_exception(e);
      }
    });
  }

 private:
  asio::io_context& io_;
};

class MessageAcksTest : public ::testing::Test {
 protected:
  void settle() {
    io.restart();
    io.poll();
  }
  void advance(milliseconds d) {
    clock.advance(d);
    settle();
  }

  asio::io_context io;
  util::ManualClock clock;
  FakeHost host{io};
  MessageAcks acks{clock, host};
};

TEST_F(MessageAcksTest, AnIndexRidesAlongWithAWriteThatHoldsOutputsBack) {
  acks.taken("c1", 10, false);
  settle();
  EXPECT_TRUE(acks.take(false).empty()) << "a write of bookkeeping only does not take it yet";
  EXPECT_EQ(acks.take(true), std::vector<std::string>{"c1"});
  EXPECT_FALSE(acks.any_due());
}

TEST_F(MessageAcksTest, ABurstIsSavedOnceAfterTheDelay) {
  acks.taken("c1", 10, false);
  acks.taken("c2", 10, false);
  acks.taken("c1", 10, false);
  settle();
  EXPECT_EQ(host.saves, 0);
  advance(MessageAcks::kSaveDelay - milliseconds(1));
  EXPECT_EQ(host.saves, 0);
  advance(milliseconds(1));
  EXPECT_EQ(host.saves, 1) << "one save for the burst";
  EXPECT_EQ(acks.take(false), (std::vector<std::string>{"c1", "c2"}));
  EXPECT_TRUE(acks.take(false).empty()) << "taken once";
}

TEST_F(MessageAcksTest, TheDelayFindsNothingWhenAWriteTookTheIndexesMeanwhile) {
  acks.taken("c1", 10, false);
  settle();
  EXPECT_EQ(acks.take(true).size(), 1u);
  advance(MessageAcks::kSaveDelay);
  EXPECT_EQ(host.saves, 0);
}

TEST_F(MessageAcksTest, ManyWaitingBytesAreSavedAtOnce) {
  acks.taken("c1", MessageAcks::kSaveBytes, false);
  EXPECT_EQ(host.saves, 1);
  EXPECT_EQ(acks.take(false), std::vector<std::string>{"c1"});
}

TEST_F(MessageAcksTest, AReplyWhileAWriteIsPendingMakesTheNextWriteHoldOutputsBack) {
  host.pending = true;
  acks.taken("c1", 0, true);
  EXPECT_EQ(host.saves, 1);
  EXPECT_TRUE(acks.gates_output());
  EXPECT_EQ(acks.take(false), std::vector<std::string>{"c1"});
  EXPECT_FALSE(acks.gates_output()) << "for one write only";
}

TEST_F(MessageAcksTest, AReplyWithNothingPendingWaitsForTheUsualSave) {
  acks.taken("c1", 0, true);
  settle();
  EXPECT_FALSE(acks.gates_output());
  EXPECT_EQ(host.saves, 0);
  advance(MessageAcks::kSaveDelay);
  EXPECT_EQ(host.saves, 1);
}

TEST_F(MessageAcksTest, AReplyWhoseIndexAGatingWriteCarriesNeedsNothingMore) {
  host.pending = true;  // a write that holds replies back is under way
  acks.written("c1", 7);
  const int before = host.saves;
  acks.taken("c1", 0, true, 7);  // covered: the reply waits for that write anyway
  acks.taken("c1", 0, true, 5);  // an earlier message: covered too
  EXPECT_EQ(host.saves, before);
  EXPECT_FALSE(acks.gates_output());
  EXPECT_FALSE(acks.any_due());

  acks.taken("c1", 0, true, 8);  // not carried yet: the next write holds the reply back
  EXPECT_TRUE(acks.gates_output());
  EXPECT_EQ(acks.take(false), std::vector<std::string>{"c1"});
}

TEST_F(MessageAcksTest, CoverageFollowsIndexesAcrossTheirWrapAround) {
  host.pending = true;
  acks.written("c1", 3);  // after 65535 comes 0
  acks.taken("c1", 0, true, 65534);
  EXPECT_FALSE(acks.gates_output()) << "65534 came before 3";
  acks.taken("c1", 0, true, 4);
  EXPECT_TRUE(acks.gates_output());
  acks.take(true);

  acks.forget("c1");  // the record is gone: nothing is covered any more
  acks.taken("c1", 0, true, 1);
  EXPECT_TRUE(acks.gates_output());
}

TEST_F(MessageAcksTest, OnlyAWriteThatHoldsOutputsBackCoversAnIndex) {
  host.pending = true;
  storage::ActorWrite write;
  storage::PersistedConn record;
  record.conn_id = "c1";
  record.tunnel_id = "gw01rq01";
  record.client_message_index = 4;
  write.conn_upserts.push_back(record);

  acks.wrote(write, false);  // bookkeeping only: the reply does not wait for it
  acks.taken("c1", 0, true, 4);
  EXPECT_TRUE(acks.gates_output());
  acks.take(true);

  acks.wrote(write, true);
  acks.taken("c1", 0, true, 4);
  EXPECT_FALSE(acks.gates_output());

  storage::ActorWrite removal;
  removal.conn_deletes.push_back("c1");
  acks.wrote(removal, true);
  acks.taken("c1", 0, true, 4);
  EXPECT_TRUE(acks.gates_output());
}

}  // namespace
}  // namespace rivetkit::core
