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
  size_t max_count = 100;
  size_t max_depth = 8;  // directory levels below /output
  TypeSet allowed = default_output_types();
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
// copied are removed then. An Error means airlock itself failed (e.g. disk).
Result<Admission> admit_inputs(const std::vector<std::string>& paths,
                               const std::string& staging_dir, const InputPolicy& policy);

struct Collection {
  std::vector<ManifestEntry> outputs;  // every entry found, accepted or not
  bool any_rejected = false;
  std::vector<std::string> limits_hit;  // e.g. "output_count", "output_depth"
};

// Walks the tree beneath `output_root_fd` (the job's /output after every
// process is dead) without following anything: openat2 beneath-only, no
// symlinks, no xdev; only regular files with one link are accepted; symlinks,
// hardlinks, fifos, sockets, devices, over-size files, names refused by
// check_component, too deep, too many, types outside the policy are refused
// and never read past their type check. Accepted files are copied (hashing as
// they copy) into `dest_dir` (an existing empty host directory), keeping
// their relative paths.
Result<Collection> collect_outputs(int output_root_fd, const std::string& dest_dir,
                                   const OutputPolicy& policy);

}  // namespace airlock::workspace
