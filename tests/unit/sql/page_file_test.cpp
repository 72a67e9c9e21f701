// PageFile's cache alone (no SQLite): it holds at most its bound of pages, least recently used
// evicted first; a committed page stays in memory until storage says it is durable, so reading it
// never returns the older copy the store still has; a partial write of a page not in memory keeps
// the rest of its stored bytes; a failing source fails the read or write instead of guessing.

#include "sql/page_file.hpp"

#include "map_source.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace rivetkit::sql {
namespace {

using Source = testing::MapSource;

std::string page_of(char c) {
  return std::string(kPageSize, c);
}

std::int64_t offset_of(std::uint32_t pgno) {
  return static_cast<std::int64_t>(pgno - 1) * kPageSize;
}

std::string read_page(PageFile& f, std::uint32_t pgno) {
  std::string out(kPageSize, '?');
  bool short_read = false;
  EXPECT_TRUE(f.read(out.data(), static_cast<int>(kPageSize), offset_of(pgno), short_read));
  EXPECT_FALSE(short_read);
  return out;
}

std::shared_ptr<Source> source_of(std::uint32_t pages, char fill) {
  auto s = std::make_shared<Source>();
  for (std::uint32_t p = 1; p <= pages; ++p) {
    s->pages[p] = page_of(fill);
  }
  return s;
}

TEST(PageFileTest, TheCacheKeepsItsBoundAndEvictsTheLeastRecentlyUsed) {
  auto source = source_of(100, 'a');
  PageFile f(100, {}, source, 8);
  for (std::uint32_t p = 1; p <= 100; ++p) {
    EXPECT_EQ(read_page(f, p), page_of('a'));
    EXPECT_LE(f.cached_pages(), 8u);
  }
  EXPECT_EQ(source->reads, 100);
  // Pages 93..100 are cached; touching 93 keeps it over the next reads.
  read_page(f, 93);
  EXPECT_EQ(source->reads, 100);
  for (std::uint32_t p = 1; p <= 7; ++p) {
    read_page(f, p);
  }
  const int before = source->reads;
  read_page(f, 93);
  EXPECT_EQ(source->reads, before) << "the most recently used page was evicted";
  read_page(f, 94);
  EXPECT_EQ(source->reads, before + 1) << "a least recently used page stayed";
}

TEST(PageFileTest, APageNotYetDurableIsNeverReadFromTheOlderStoredCopy) {
  auto source = source_of(100, 'a');
  PageFile f(100, {}, source, 4);
  const std::string b = page_of('b');
  const std::string c = page_of('c');
  ASSERT_TRUE(f.write(b.data(), static_cast<int>(kPageSize), offset_of(5)));
  f.commit();
  f.publish();
  auto taken = f.take_committed();  // in flight to storage, not durable yet
  ASSERT_TRUE(taken);
  ASSERT_TRUE(f.write(c.data(), static_cast<int>(kPageSize), offset_of(6)));
  f.commit();  // committed, not even published
  for (std::uint32_t p = 10; p <= 60; ++p) {
    read_page(f, p);
  }
  EXPECT_EQ(read_page(f, 5), b);
  EXPECT_EQ(read_page(f, 6), c);
  EXPECT_LE(f.cached_pages(), 4u + 2u);  // the bound, plus the two pinned pages

  // Durable: the store has them now, and they may go.
  for (const auto& [pgno, page] : taken->pages) {
    source->pages[pgno] = page;
  }
  f.durable();
  f.publish();
  auto second = f.take_committed();
  ASSERT_TRUE(second);
  for (const auto& [pgno, page] : second->pages) {
    source->pages[pgno] = page;
  }
  f.durable();
  for (std::uint32_t p = 10; p <= 60; ++p) {
    read_page(f, p);
  }
  EXPECT_LE(f.cached_pages(), 4u);
  const int before = source->reads;
  EXPECT_EQ(read_page(f, 5), b);
  EXPECT_EQ(read_page(f, 6), c);
  EXPECT_EQ(source->reads, before + 2);  // evicted, read back from the store
}

// A statement's commit is takeable only once published on the strand (when its caller resumes):
// a write taken meanwhile carries none of it, and the pages stay pinned and readable.
TEST(PageFileTest, CommittedPagesWaitForPublishBeforeAWriteCanTakeThem) {
  auto source = source_of(10, 'a');
  PageFile f(10, {}, source, 4);
  const std::string b = page_of('b');
  ASSERT_TRUE(f.write(b.data(), static_cast<int>(kPageSize), offset_of(3)));
  ASSERT_TRUE(f.write(b.data(), static_cast<int>(kPageSize), offset_of(12)));  // grows to 12
  f.commit();
  EXPECT_FALSE(f.has_committed());
  EXPECT_FALSE(f.take_committed()) << "a commit not yet published was taken";
  for (std::uint32_t p = 1; p <= 10; ++p) {
    read_page(f, p);
  }
  EXPECT_EQ(read_page(f, 3), b);
  EXPECT_EQ(read_page(f, 12), b);
  EXPECT_EQ(f.size(), 12 * static_cast<std::int64_t>(kPageSize));

  f.publish();
  ASSERT_TRUE(f.has_committed());
  auto taken = f.take_committed();
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->size_pages, 12u);
  EXPECT_EQ(taken->pages.size(), 2u);
  EXPECT_EQ(taken->pages.at(3), b);

  // A second commit that shrinks the file back: published, it carries the size and no page past it.
  ASSERT_TRUE(f.write(b.data(), static_cast<int>(kPageSize), offset_of(2)));
  f.truncate(5 * static_cast<std::int64_t>(kPageSize));
  f.commit();
  EXPECT_FALSE(f.take_committed());
  f.publish();
  auto second = f.take_committed();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->size_pages, 5u);
  EXPECT_EQ(second->pages.size(), 1u);
  EXPECT_EQ(second->pages.count(2), 1u);
  f.publish();  // nothing new: nothing to take
  EXPECT_FALSE(f.take_committed());
}

TEST(PageFileTest, APartialWriteOfAPageNotInMemoryKeepsItsStoredBytes) {
  auto source = source_of(10, 'a');
  PageFile f(10, {}, source, 2);
  const std::string x(100, 'x');
  ASSERT_TRUE(f.write(x.data(), 100, offset_of(7) + 50));
  f.commit();
  auto page = read_page(f, 7);
  EXPECT_EQ(page.substr(0, 50), std::string(50, 'a'));
  EXPECT_EQ(page.substr(50, 100), x);
  EXPECT_EQ(page.substr(150), std::string(kPageSize - 150, 'a'));
}

TEST(PageFileTest, AFailingSourceFailsTheReadOrWrite) {
  auto source = source_of(10, 'a');
  PageFile f(10, {}, source, 2);
  source->failing = true;
  std::string out(kPageSize, '?');
  bool short_read = false;
  EXPECT_FALSE(f.read(out.data(), static_cast<int>(kPageSize), offset_of(3), short_read));
  const std::string x(10, 'x');
  EXPECT_FALSE(f.write(x.data(), 10, offset_of(4) + 1));
  // A whole page needs no read.
  const std::string whole = page_of('w');
  EXPECT_TRUE(f.write(whole.data(), static_cast<int>(kPageSize), offset_of(4)));
}

TEST(PageFileTest, PreloadedPagesBeyondTheBoundKeepTheLowestNumbers) {
  auto source = source_of(50, 'a');
  PageFile f(50, source->pages, source, 10);
  EXPECT_EQ(f.cached_pages(), 10u);
  for (std::uint32_t p = 1; p <= 10; ++p) {
    read_page(f, p);
  }
  EXPECT_EQ(source->reads, 0);
}

}  // namespace
}  // namespace rivetkit::sql
