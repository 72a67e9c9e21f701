// One owner per data directory: a second LocalStore on an open directory fails at once with
// storage.data_dir_locked naming the holder, and the directory is free again after close.

#include "storage/dir_lock.hpp"

#include "storage/local_store.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace rivetkit::storage {
namespace {

using test::TempDir;

TEST(DirLock, SecondStoreOnTheSameDirectoryIsRefusedNamingTheHolder) {
  TempDir dir;
  auto first = LocalStore::open(dir.path());
  ASSERT_TRUE(first) << first.error().message;

  auto second = LocalStore::open(dir.path());
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().qualified_code(), "storage.data_dir_locked");
  EXPECT_NE(second.error().message.find(dir.path()), std::string::npos) << second.error().message;
  EXPECT_NE(second.error().message.find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.error().message;

  (*first)->close();
  auto third = LocalStore::open(dir.path());
  EXPECT_TRUE(third) << "closing the store frees the directory: " << third.error().message;
}

TEST(DirLock, ReleasedWithTheObjectAndMovable) {
  TempDir dir;
  {
    auto a = DirLock::acquire(dir.path());
    ASSERT_TRUE(a);
    DirLock moved = std::move(*a);
    EXPECT_TRUE(moved.held());
    EXPECT_FALSE(a->held());
    EXPECT_FALSE(DirLock::acquire(dir.path())) << "still held by the moved-to lock";
  }
  EXPECT_TRUE(DirLock::acquire(dir.path())) << "freed when the holder went away";
}

}  // namespace
}  // namespace rivetkit::storage
