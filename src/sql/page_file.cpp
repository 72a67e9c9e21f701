#include "sql/page_file.hpp"

#include <algorithm>
#include <cstring>

namespace rivetkit::sql {

PageFile::PageFile(std::uint32_t size_pages,
                   std::map<std::uint32_t, std::string> preloaded,
                   std::shared_ptr<PageSource> source,
                   std::size_t cache_pages)
    : source_(std::move(source)),
      cache_pages_(cache_pages),
      txn_size_pages_(size_pages),
      size_pages_(size_pages),
      published_size_pages_(size_pages) {
  // Highest first, so the lowest (the schema's pages) are the most recently used.
  for (auto it = preloaded.rbegin(); it != preloaded.rend(); ++it) {
    cache_put(it->first, std::move(it->second));
  }
  evict();
}

const std::string* PageFile::cached(std::uint32_t pgno) {
  if (auto it = txn_pages_.find(pgno); it != txn_pages_.end()) {
    return &it->second;
  }
  if (auto it = cache_.find(pgno); it != cache_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return &it->second.page;
  }
  return nullptr;
}

void PageFile::cache_put(std::uint32_t pgno, std::string page) {
  if (auto it = cache_.find(pgno); it != cache_.end()) {
    it->second.page = std::move(page);
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return;
  }
  lru_.push_front(pgno);
  cache_.emplace(pgno, CacheEntry{std::move(page), lru_.begin()});
}

void PageFile::cache_drop_from(std::uint32_t first) {
  for (auto it = cache_.lower_bound(first); it != cache_.end();) {
    lru_.erase(it->second.lru);
    it = cache_.erase(it);
  }
}

void PageFile::evict() {
  auto it = lru_.end();
  while (cache_.size() > cache_pages_ && it != lru_.begin()) {
    --it;
    const std::uint32_t pgno = *it;
    if (staged_.count(pgno) != 0 || unsaved_.count(pgno) != 0 || in_flight_.count(pgno) != 0) {
      continue;  // pinned until durable
    }
    cache_.erase(pgno);
    it = lru_.erase(it);
  }
}

bool PageFile::fetch(std::uint32_t pgno, std::string* copy_to) {
  // The source's copy is current: committed pages stay pinned in memory until durable.
  auto stored = source_->read_page(pgno);
  if (!stored) {
    return false;
  }
  std::string page = stored->value_or(std::string(kPageSize, '\0'));
  page.resize(kPageSize, '\0');
  std::lock_guard lock(mutex_);
  if (const auto* now = cached(pgno)) {
    page = *now;  // what memory holds wins (nothing writes it meanwhile; defensive)
  }
  if (copy_to != nullptr) {
    *copy_to = page;
  }
  cache_put(pgno, std::move(page));
  evict();
  return true;
}

bool PageFile::read(void* out, int amount, std::int64_t offset, bool& short_read) {
  auto* dst = static_cast<char*>(out);
  short_read = false;
  while (amount > 0) {
    auto pgno = static_cast<std::uint32_t>(offset / kPageSize) + 1;
    auto in_page = static_cast<std::size_t>(offset % kPageSize);
    auto n = std::min<std::size_t>(static_cast<std::size_t>(amount), kPageSize - in_page);
    std::string fetched;
    const std::string* page = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (pgno > txn_size_pages_) {
        // Past the end: the rest reads as zeros.
        std::memset(dst, 0, static_cast<std::size_t>(amount));
        short_read = true;
        return true;
      }
      if (const auto* hit = cached(pgno)) {
        std::memcpy(dst, hit->data() + in_page, n);
        page = hit;
      }
    }
    if (page == nullptr) {
      if (!fetch(pgno, &fetched)) {
        return false;
      }
      std::memcpy(dst, fetched.data() + in_page, n);
    }
    dst += n;
    offset += static_cast<std::int64_t>(n);
    amount -= static_cast<int>(n);
  }
  return true;
}

std::string* PageFile::page_for_write(std::uint32_t pgno,
                                      std::map<std::uint32_t, std::string>& fetched) {
  auto it = txn_pages_.find(pgno);
  if (it != txn_pages_.end()) {
    return &it->second;
  }
  // A partial write of a page keeps the rest of its bytes: start from the current copy.
  std::string base;
  if (pgno <= txn_size_pages_) {
    if (auto c = cache_.find(pgno); c != cache_.end()) {
      base = c->second.page;
    } else if (auto f = fetched.find(pgno); f != fetched.end()) {
      base = std::move(f->second);
    }
  }
  base.resize(kPageSize, '\0');
  return &txn_pages_.emplace(pgno, std::move(base)).first->second;
}

bool PageFile::write(const void* data, int amount, std::int64_t offset) {
  // Pages written in part and not in memory are read first (SQLite writes whole pages of the
  // main file, so this is only a safeguard).
  std::map<std::uint32_t, std::string> fetched;
  for (std::int64_t at = offset; at < offset + amount;) {
    auto pgno = static_cast<std::uint32_t>(at / kPageSize) + 1;
    auto in_page = static_cast<std::size_t>(at % kPageSize);
    auto n = std::min<std::int64_t>(offset + amount - at,
                                    static_cast<std::int64_t>(kPageSize - in_page));
    bool need = false;
    if (in_page != 0 || n < static_cast<std::int64_t>(kPageSize)) {
      std::lock_guard lock(mutex_);
      need = pgno <= txn_size_pages_ && txn_pages_.count(pgno) == 0 && cache_.count(pgno) == 0;
    }
    if (need && !fetch(pgno, &fetched[pgno])) {
      return false;
    }
    at += n;
  }
  const auto* src = static_cast<const char*>(data);
  std::lock_guard lock(mutex_);
  txn_dirty_ = true;
  while (amount > 0) {
    auto pgno = static_cast<std::uint32_t>(offset / kPageSize) + 1;
    auto in_page = static_cast<std::size_t>(offset % kPageSize);
    auto n = std::min<std::size_t>(static_cast<std::size_t>(amount), kPageSize - in_page);
    auto* page = page_for_write(pgno, fetched);
    std::memcpy(page->data() + in_page, src, n);
    txn_size_pages_ = std::max(txn_size_pages_, pgno);
    src += n;
    offset += static_cast<std::int64_t>(n);
    amount -= static_cast<int>(n);
  }
  return true;
}

void PageFile::truncate(std::int64_t size) {
  std::lock_guard lock(mutex_);
  txn_dirty_ = true;
  auto pages = static_cast<std::uint32_t>((size + kPageSize - 1) / kPageSize);
  txn_size_pages_ = pages;
  txn_pages_.erase(txn_pages_.upper_bound(pages), txn_pages_.end());
}

std::int64_t PageFile::size() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::int64_t>(txn_size_pages_) * kPageSize;
}

void PageFile::commit() {
  std::lock_guard lock(mutex_);
  if (!txn_dirty_) {
    return;
  }
  txn_dirty_ = false;
  staged_any_ = true;
  size_pages_ = txn_size_pages_;
  cache_drop_from(size_pages_ + 1);
  staged_.erase(staged_.upper_bound(size_pages_), staged_.end());
  for (auto& [pgno, page] : txn_pages_) {
    cache_put(pgno, page);
    staged_.insert_or_assign(pgno, std::move(page));
  }
  txn_pages_.clear();
  evict();
}

void PageFile::publish() {
  std::lock_guard lock(mutex_);
  if (!staged_any_) {
    return;
  }
  staged_any_ = false;
  // size_pages_ is the size of the last commit, so of what is staged (only the worker changes it,
  // and it waits for the strand between statements).
  if (size_pages_ != published_size_pages_) {
    unsaved_size_ = true;
    published_size_pages_ = size_pages_;
  }
  unsaved_.erase(unsaved_.upper_bound(published_size_pages_), unsaved_.end());
  for (auto& [pgno, page] : staged_) {
    unsaved_.insert_or_assign(pgno, std::move(page));
  }
  staged_.clear();
}

std::optional<PageFile::Committed> PageFile::take_committed() {
  std::lock_guard lock(mutex_);
  if (unsaved_.empty() && !unsaved_size_) {
    return std::nullopt;
  }
  Committed out;
  for (const auto& [pgno, page] : unsaved_) {
    in_flight_.insert(pgno);
  }
  out.pages = std::move(unsaved_);
  unsaved_.clear();
  out.size_pages = published_size_pages_;
  unsaved_size_ = false;
  return out;
}

void PageFile::durable() {
  std::lock_guard lock(mutex_);
  in_flight_.clear();
  evict();
}

std::size_t PageFile::cached_pages() const {
  std::lock_guard lock(mutex_);
  return cache_.size();
}

bool PageFile::has_committed() const {
  std::lock_guard lock(mutex_);
  return !unsaved_.empty() || unsaved_size_;
}

}  // namespace rivetkit::sql
