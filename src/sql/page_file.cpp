#include "sql/page_file.hpp"

#include <algorithm>
#include <cstring>

namespace rivetkit::sql {

PageFile::PageFile(std::uint32_t size_pages,
                   std::map<std::uint32_t, std::string> preloaded,
                   std::shared_ptr<PageSource> source)
    : source_(std::move(source)),
      txn_size_pages_(size_pages),
      cache_(std::move(preloaded)),
      size_pages_(size_pages) {}

const std::string* PageFile::cached(std::uint32_t pgno) const {
  if (auto it = txn_pages_.find(pgno); it != txn_pages_.end()) {
    return &it->second;
  }
  if (auto it = cache_.find(pgno); it != cache_.end()) {
    return &it->second;
  }
  return nullptr;
}

bool PageFile::read(void* out, int amount, std::int64_t offset, bool& short_read) {
  auto* dst = static_cast<char*>(out);
  short_read = false;
  while (amount > 0) {
    auto pgno = static_cast<std::uint32_t>(offset / kPageSize) + 1;
    auto in_page = static_cast<std::size_t>(offset % kPageSize);
    auto n = std::min<std::size_t>(static_cast<std::size_t>(amount), kPageSize - in_page);
    std::optional<std::string> fetched;
    {
      std::lock_guard lock(mutex_);
      if (pgno > txn_size_pages_) {
        std::memset(dst, 0, n);
        short_read = true;
      } else if (const auto* page = cached(pgno)) {
        std::memcpy(dst, page->data() + in_page, n);
        dst += n;
        offset += static_cast<std::int64_t>(n);
        amount -= static_cast<int>(n);
        continue;
      }
    }
    if (short_read) {
      // Past the end: the rest reads as zeros too.
      std::memset(dst, 0, static_cast<std::size_t>(amount));
      return true;
    }
    // Not in memory: the source's copy is current (committed pages stay cached until durable).
    auto stored = source_->read_page(pgno);
    if (!stored) {
      return false;
    }
    std::string page = stored->value_or(std::string(kPageSize, '\0'));
    page.resize(kPageSize, '\0');
    std::memcpy(dst, page.data() + in_page, n);
    {
      std::lock_guard lock(mutex_);
      cache_.try_emplace(pgno, std::move(page));
    }
    dst += n;
    offset += static_cast<std::int64_t>(n);
    amount -= static_cast<int>(n);
  }
  return true;
}

std::string* PageFile::page_for_write(std::uint32_t pgno) {
  auto it = txn_pages_.find(pgno);
  if (it != txn_pages_.end()) {
    return &it->second;
  }
  // A partial write of a page keeps the rest of its bytes: start from the current copy.
  std::string base;
  if (auto c = cache_.find(pgno); c != cache_.end() && pgno <= txn_size_pages_) {
    base = c->second;
  }
  base.resize(kPageSize, '\0');
  return &txn_pages_.emplace(pgno, std::move(base)).first->second;
}

void PageFile::write(const void* data, int amount, std::int64_t offset) {
  const auto* src = static_cast<const char*>(data);
  std::lock_guard lock(mutex_);
  txn_dirty_ = true;
  while (amount > 0) {
    auto pgno = static_cast<std::uint32_t>(offset / kPageSize) + 1;
    auto in_page = static_cast<std::size_t>(offset % kPageSize);
    auto n = std::min<std::size_t>(static_cast<std::size_t>(amount), kPageSize - in_page);
    auto* page = page_for_write(pgno);
    std::memcpy(page->data() + in_page, src, n);
    txn_size_pages_ = std::max(txn_size_pages_, pgno);
    src += n;
    offset += static_cast<std::int64_t>(n);
    amount -= static_cast<int>(n);
  }
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
  if (txn_size_pages_ != size_pages_) {
    unsaved_size_ = true;
  }
  size_pages_ = txn_size_pages_;
  cache_.erase(cache_.upper_bound(size_pages_), cache_.end());
  unsaved_.erase(unsaved_.upper_bound(size_pages_), unsaved_.end());
  for (auto& [pgno, page] : txn_pages_) {
    cache_.insert_or_assign(pgno, page);
    unsaved_.insert_or_assign(pgno, std::move(page));
  }
  txn_pages_.clear();
}

std::optional<PageFile::Committed> PageFile::take_committed() {
  std::lock_guard lock(mutex_);
  if (unsaved_.empty() && !unsaved_size_) {
    return std::nullopt;
  }
  Committed out;
  out.pages = std::move(unsaved_);
  unsaved_.clear();
  out.size_pages = size_pages_;
  unsaved_size_ = false;
  return out;
}

bool PageFile::has_committed() const {
  std::lock_guard lock(mutex_);
  return !unsaved_.empty() || unsaved_size_;
}

}  // namespace rivetkit::sql
