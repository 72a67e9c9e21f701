#pragma once
// The page VFS: a SQLite VFS ("rivetkit-pages") whose main database file is a PageFile
// (page_file.hpp). Nothing it opens touches the local disk: the journal is kept in memory
// (journal_mode=MEMORY), temporary files too (temp_store=MEMORY), and any other file SQLite asks
// for is refused. SQLite's own commit ends in SQLITE_FCNTL_COMMIT_PHASETWO, which the VFS turns
// into PageFile::commit().

#include "sql/page_file.hpp"
#include <rivetkit/result.hpp>

struct sqlite3;

namespace rivetkit::sql {

/// Opens a connection on `file` (SQLITE_OPEN_NOMUTEX: one thread at a time). `file` must outlive
/// the connection. Errors are `database.open_failed`.
Result<sqlite3*> open_on_pages(PageFile& file);

}  // namespace rivetkit::sql
