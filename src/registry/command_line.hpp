#pragma once
// The command line of a rivetkit-cpp server (Registry::run): its version, and the environment
// variables it reads, which --help lists after the flags.

#include <string>

namespace rivetkit::command_line {

/// What --version prints: this library's version and the RivetKit protocols it speaks.
std::string version_text();
/// The --help footer: every environment variable the server reads, one per line.
std::string environment_help();
/// --emit-types: writes `declarations` to `path` (`-`: stdout). Returns the exit code: 0, or 1
/// with the reason on stderr when the file cannot be written.
int write_types(const std::string& path, const std::string& declarations);

}  // namespace rivetkit::command_line
