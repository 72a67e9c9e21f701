#pragma once
// The command line of a rivetkit-cpp server (Registry::run): its version, and the environment
// variables it reads, which --help lists after the flags.

#include <string>

namespace rivetkit::command_line {

/// What --version prints: this library's version and the RivetKit protocols it speaks.
std::string version_text();
/// The --help footer: every environment variable the server reads, one per line.
std::string environment_help();

}  // namespace rivetkit::command_line
