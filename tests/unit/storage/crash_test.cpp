// Crash consistency: a child process commits in a loop and reports every acknowledged commit over
// a pipe; the parent SIGKILLs it mid-stream, reopens the database and checks that every
// acknowledged commit is present. This is the project's guarantee "a reply is sent only after the
// state it depends on is durable", checked against a real process death, several times over.
// Each commit also replaces a connection and a schedule, so the check covers the atomicity of a
// whole ActorWrite across a crash; and each child start reports the generations it acquired, which
// must never repeat across the kills.

#include "storage/local_store.hpp"
#include "test_util.hpp"
#include "util/spawn.hpp"

#include <boost/asio/io_context.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace rivetkit::storage {
namespace {

using test::make_record;
using test::open_store;
using test::run_sync;
using test::state_write;
using test::TempDir;

constexpr std::uint32_t kActors = 4;
constexpr std::uint32_t kMaxCommitsPerActor = 50000;  // bound; the parent kills long before

struct Ack {
  std::uint32_t kind;  // kAckCommit or kAckGeneration
  std::uint32_t actor;
  std::uint32_t value;  // the committed seq, or a generation
};
constexpr std::uint32_t kAckCommit = 0;
constexpr std::uint32_t kAckGeneration = 1;
constexpr int kGenerationsPerStart = 3;

std::string actor_id(std::uint32_t a) {
  return fmt::format("crash-{}", a);
}

bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) {
      continue;
    }
    if (w <= 0) {
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

std::uint32_t parse_seq(const std::optional<std::string>& state) {
  return state ? static_cast<std::uint32_t>(std::stoul(*state)) : 0;
}

std::string event_id(std::uint32_t seq) {
  return fmt::format("s{}", seq);
}

/// Commit `seq`: the state, the one connection and the one schedule all carry it.
ActorWrite seq_write(std::uint32_t seq) {
  ActorWrite w = state_write(fmt::format("{}", seq));
  PersistedConn conn;
  conn.conn_id = "conn";
  conn.state = fmt::format("{}", seq);
  conn.server_message_index = static_cast<std::uint16_t>(seq & 0xFFFF);
  conn.subscriptions = {fmt::format("e{}", seq)};
  w.conn_upserts.push_back(std::move(conn));
  PersistedSchedule schedule;
  schedule.event_id = event_id(seq);
  schedule.trigger_at = seq;
  schedule.action = "tick";
  w.schedule_upserts.push_back(std::move(schedule));
  if (seq > 0) {
    w.schedule_deletes.push_back(event_id(seq - 1));
  }
  return w;
}

Task<void> commit_loop(std::shared_ptr<LocalStore> store,
                       std::uint32_t a,
                       std::uint32_t first,
                       int fd) {
  auto as = store->actor_store(actor_id(a));
  for (std::uint32_t seq = first; seq < first + kMaxCommitsPerActor; ++seq) {
    ActorWrite w = seq_write(seq);
    auto op = as->commit(std::move(w));
    auto r = co_await std::move(op);
    if (!r) {
      ::_exit(4);
    }
    Ack ack{kAckCommit, a, seq};
    if (!write_all(fd, &ack, sizeof ack)) {
      ::_exit(5);
    }
  }
}

/// The child: open, make sure the actors exist, resume each from its persisted seq, commit
/// forever (bounded), acknowledging each commit on `fd` only after co_await returned success.
[[noreturn]] void child_main(const std::string& dir, int fd, bool synchronous_full) {
  LocalStoreOptions options;
  options.synchronous_full = synchronous_full;
  auto opened = LocalStore::open(dir, options);
  if (!opened) {
    ::_exit(2);
  }
  std::shared_ptr<LocalStore> store = *opened;
  boost::asio::io_context io(1);
  for (std::uint32_t a = 0; a < kActors; ++a) {
    auto r =
        run_sync(store->get_or_create_actor(make_record(actor_id(a), "crash", actor_id(a), a)));
    if (!r) {
      ::_exit(3);
    }
    auto loaded = run_sync(store->actor_store(actor_id(a))->load());
    if (!loaded) {
      ::_exit(3);
    }
    // A wake: generations from acquire_generation (mostly from memory) and next_generation.
    for (int i = 0; i < kGenerationsPerStart; ++i) {
      auto g = run_sync(i == 1 ? store->next_generation(actor_id(a))
                               : store->acquire_generation(actor_id(a)));
      Ack ack{kAckGeneration, a, g ? *g : 0};
      if (!g || !write_all(fd, &ack, sizeof ack)) {
        ::_exit(6);
      }
    }
    util::spawn(io.get_executor(), commit_loop(store, a, parse_seq(loaded->state) + 1, fd),
                "commit loop");
  }
  io.run();
  store->close();
  ::_exit(0);
}

struct Round {
  std::array<std::uint32_t, kActors> max_acked{};
  std::array<std::vector<std::uint32_t>, kActors> generations;
  std::uint32_t acks = 0;
  bool killed = false;
};

/// Runs one child, kills it after `kill_after` acknowledgements, collects every ack it sent.
Round run_child(const std::string& dir, bool synchronous_full, std::uint32_t kill_after) {
  Round round;
  int fds[2];
  if (::pipe(fds) != 0) {
    ADD_FAILURE() << "pipe failed";
    return round;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    return round;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(dir, fds[1], synchronous_full);
  }
  ::close(fds[1]);
  Ack ack{};
  std::size_t have = 0;
  auto* buf = reinterpret_cast<char*>(&ack);
  while (true) {
    ssize_t n = ::read(fds[0], buf + have, sizeof ack - have);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;  // EOF: the child is dead (killed or exited) and every ack it wrote was read
    }
    have += static_cast<std::size_t>(n);
    if (have < sizeof ack) {
      continue;
    }
    have = 0;
    EXPECT_LT(ack.actor, kActors);
    if (ack.actor >= kActors) {
      continue;
    }
    if (ack.kind == kAckGeneration) {
      round.generations[ack.actor].push_back(ack.value);
      continue;
    }
    EXPECT_GT(ack.value, round.max_acked[ack.actor]) << "acks arrive in commit order per actor";
    round.max_acked[ack.actor] = ack.value;
    ++round.acks;
    if (round.acks == kill_after && !round.killed) {
      ::kill(pid, SIGKILL);  // keep reading: acks already in the pipe count too
      round.killed = true;
    }
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "child did not die by SIGKILL; exit status "
      << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return round;
}

class CrashTest : public ::testing::TestWithParam<bool> {};

TEST_P(CrashTest, EveryAcknowledgedCommitSurvivesSigkill) {
  const bool synchronous_full = GetParam();
  TempDir dir;
  std::array<std::uint32_t, kActors> acked{};
  std::array<std::uint32_t, kActors> max_generation{};
  constexpr int kRounds = 3;
  for (int round_no = 0; round_no < kRounds; ++round_no) {
    SCOPED_TRACE(fmt::format("round {}", round_no));
    Round round =
        run_child(dir.path(), synchronous_full, 150 + 100 * static_cast<std::uint32_t>(round_no));
    ASSERT_TRUE(round.killed) << "child stopped before being killed (acks " << round.acks << ")";

    // Restart and check.
    auto store = open_store(dir.path());
    ASSERT_TRUE(store);
    auto consistent = run_sync(store->verify_consistency_for_test());
    EXPECT_TRUE(consistent) << consistent.error().message;
    for (std::uint32_t a = 0; a < kActors; ++a) {
      acked[a] = std::max(acked[a], round.max_acked[a]);
      auto loaded = run_sync(store->actor_store(actor_id(a))->load());
      ASSERT_TRUE(loaded) << loaded.error().message;
      std::uint32_t persisted = parse_seq(loaded->state);
      EXPECT_GE(persisted, acked[a]) << "actor " << a << " lost an acknowledged commit";
      // Each actor has one commit in flight at a time: at most that one is ahead of the last ack.
      EXPECT_LE(persisted, acked[a] + 1) << "actor " << a;
      acked[a] = persisted;  // the next round resumes from here
      // The connection and the schedule were written in the same op as the state: same seq.
      ASSERT_EQ(loaded->conns.size(), 1u) << "actor " << a;
      EXPECT_EQ(loaded->conns[0].state, fmt::format("{}", persisted));
      EXPECT_EQ(loaded->conns[0].server_message_index, persisted & 0xFFFF);
      EXPECT_EQ(loaded->conns[0].subscriptions,
                std::vector<std::string>{fmt::format("e{}", persisted)});
      ASSERT_EQ(loaded->schedules.size(), 1u) << "actor " << a;
      EXPECT_EQ(loaded->schedules[0].event_id, event_id(persisted));
      EXPECT_EQ(loaded->schedules[0].trigger_at, persisted);
      // Generations handed out before the kill never come back, and keep growing.
      EXPECT_EQ(round.generations[a].size(), static_cast<std::size_t>(kGenerationsPerStart));
      for (std::uint32_t g : round.generations[a]) {
        EXPECT_GT(g, max_generation[a]) << "actor " << a << " got generation " << g << " again";
        max_generation[a] = std::max(max_generation[a], g);
      }
    }
    auto listed = run_sync(store->list_actors([] {
      ListQuery q;
      q.name = "crash";
      return q;
    }()));
    ASSERT_TRUE(listed);
    EXPECT_EQ(listed->size(), static_cast<std::size_t>(kActors));
    auto alarms = run_sync(store->pending_alarms());
    ASSERT_TRUE(alarms);
    EXPECT_EQ(alarms->size(), static_cast<std::size_t>(kActors));
    store->close();
  }
}

INSTANTIATE_TEST_SUITE_P(Synchronous,
                         CrashTest,
                         ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? std::string("Full") : std::string("Normal");
                         });

}  // namespace
}  // namespace rivetkit::storage
