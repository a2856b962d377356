// The archive reader of the archive and office checks (docs/checks.md):
// libarchive runs on the output in a child process of its own (`airlock
// inspect-archive`, internal), confined before it reads a byte: no root (uid
// and gid 65534), no new privileges, a seccomp allow-list that leaves it
// reading its one file descriptor and writing its answer (no open, no socket,
// no exec, no executable memory), 512 MiB of address space, 10 s of CPU, 20 s
// of wall time (alarm), no file writes. libarchive is a large C library with a
// history of memory-safety bugs; a bug it has on a hostile archive is
// contained there, and the service reads the child's answer as untrusted JSON.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "validate/checks.h"

namespace airlock::service {

// Reads the accepted outputs by name (name -> host path), one child each.
validate::ArchiveReader confined_archive_reader(std::string airlock_binary,
                                                std::map<std::string, std::string> outputs);

// The child's side (`airlock inspect-archive PATH BOUNDS_JSON OPTIONS_JSON`):
// opens PATH, confines itself, scans, writes the scan as JSON on stdout.
// Exit status 0 with an answer; 2 on a usage or setup error.
int inspect_archive_main(const std::vector<std::string>& args);

}  // namespace airlock::service
