// Input admission and output collection: the two places files cross the
// boundary. Both copy while hashing, so the hash is of exactly what crossed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "workspace/file_type.h"

namespace airlock::workspace {

struct InputPolicy {
  uint64_t max_file_bytes = 64ull << 20;
  uint64_t max_total_bytes = 256ull << 20;
  size_t max_count = 32;
  TypeSet allowed = default_input_types();
};

struct OutputPolicy {
  uint64_t max_file_bytes = 64ull << 20;
  uint64_t max_total_bytes = 256ull << 20;
  size_t max_count = 100;  // entries of any kind, directories included
  size_t max_depth = 8;    // directory levels below /output (one fd pair held per level)
  TypeSet allowed = default_output_types();
  // Paths (relative to /output) that no output may take or stand in the way
  // of: where the job's record will be written inside --output-dir.
  std::vector<std::string> reserved;
};

struct ManifestEntry {
  std::string name;  // relative path; printable() form if the raw name was refused
  uint64_t size = 0;
  std::string sha256;  // empty when not read (refused before reading)
  std::string type;    // type_name(), or "" when not read
  // Outputs only:
  bool accepted = true;
  std::string reason;  // why refused; empty when accepted
};

struct Admission {
  std::vector<ManifestEntry> inputs;  // what was admitted (all, or none)
  std::optional<std::string> rejection;  // set: input_rejected with this reason
};

// Copies every host file in `paths` into `staging_dir` (an existing, empty,
// job-private directory) as <basename>, mode 0444, hashing and typing while
// copying. Any refused file (missing, not a regular file, bad name, duplicate
// name, too big, too many, type not allowed) sets `rejection`; files already
// copied are removed then. The rejection is one line naming the file in
// printable() form, e.g. `input "data.bin": type binary is not allowed
// (allowed: text, csv)`. An Error means airlock itself failed (e.g. disk, or
// a staging directory that was not empty); nothing is left staged then either.
Result<Admission> admit_inputs(const std::vector<std::string>& paths,
                               const std::string& staging_dir, const InputPolicy& policy);

struct Collection {
  std::vector<ManifestEntry> outputs;  // every entry found, accepted or not
  bool any_rejected = false;
  // Each at most once: "output_count", "output_depth", "output_size" (a file over
  // max_file_bytes, or the total over max_total_bytes).
  std::vector<std::string> limits_hit;
};

// Walks the tree beneath `output_root_fd` (the job's /output after every
// process is dead) without following anything: openat2 beneath-only, no
// symlinks, no xdev; only regular files with one link are accepted; symlinks,
// hardlinks, fifos, sockets, devices, over-size files, names refused by
// check_component, too deep, too many, types outside the policy are refused
// and never read past their type check. Accepted files are copied (hashing as
// they copy) into `dest_dir` (an existing empty host directory), keeping
// their relative paths; directories with nothing accepted are not kept.
//
// Entries are recorded in sorted order per directory, depth first. Refused
// entries carry printable() names and size (from lstat) where known; sha256
// and type only when the file was read (refused by type). A too-deep
// directory is one refused entry for its whole subtree. After max_count
// entries the walk stops and one refused entry, named after the directory
// being listed, records "output_count". An Error means airlock failed (e.g.
// dest_dir not empty, disk full); dest_dir may then hold a partial copy.
Result<Collection> collect_outputs(int output_root_fd, const std::string& dest_dir,
                                   const OutputPolicy& policy);

}  // namespace airlock::workspace
