#pragma once
// The PageSource of the sql tests: an in-memory map standing in for the actor's KV, holding what
// was made durable (take_committed applied), counting reads, failing on demand.

#include "sql/page_file.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace rivetkit::sql::testing {

struct MapSource final : PageSource {
  std::map<std::uint32_t, std::string> pages;
  std::uint32_t size_pages = 0;
  int reads = 0;
  bool failing = false;
  Result<std::optional<std::string>> read_page(std::uint32_t pgno) override {
    ++reads;
    if (failing) {
      return fail(Error{"storage", "read_failed", "injected", std::nullopt, false});
    }
    auto it = pages.find(pgno);
    if (it == pages.end()) {
      return std::optional<std::string>{};
    }
    return std::optional<std::string>{it->second};
  }
  void apply(const PageFile::Committed& c) {
    for (const auto& [pgno, page] : c.pages) {
      pages[pgno] = page;
    }
    pages.erase(pages.upper_bound(c.size_pages), pages.end());
    size_pages = c.size_pages;
  }
};

}  // namespace rivetkit::sql::testing
