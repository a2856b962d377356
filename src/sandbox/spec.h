// Everything the sandbox child needs, decided on the host before the clone.
// The child only reads this (c_str(), fds) and issues syscalls: it never
// allocates, so the same sequence is safe after fork from a threaded parent
// (the job service, a preloaded interpreter). The job's command is not part
// of it: it is sent to the prepared sandbox when the job starts (command.h).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/command.h"
#include "sandbox/seccomp_filter.h"

namespace airlock::sandbox {

using InProcessPayload = void (*)(const CommandView& command);

// Paths inside the sandbox are stored relative ("usr", "etc/passwd"): the
// child builds the tree with its working directory at the new root.
struct BindMount {
  std::string source;   // host path
  std::string target;   // relative path inside the sandbox
  bool is_file = false; // mount point is a file, not a directory
  bool recursive = true;
  bool noexec = false;
};

struct FileEntry {
  std::string path;  // relative
  std::string content;
  mode_t mode = 0644;
};

struct SymlinkEntry {
  std::string link_target;  // what the link points to
  std::string path;         // relative
};

// A filesystem the host created with fsopen/fsmount (or a subtree of one,
// open_tree), attached by the child.
struct AttachMount {
  int fd = -1;         // detached mount fd (owned by the caller)
  std::string target;  // relative
  bool writable = true;
  bool is_file = false;  // the mount's root is a file (a file of an image's /etc)
};

struct Rlimit {
  int resource;
  rlim_t soft, hard;
};

struct SandboxSpec {
  std::string root_mountpoint;  // host directory the new root tmpfs is mounted on
  std::string root_tmpfs_options = "size=8m,nr_inodes=4096,mode=0755";
  std::vector<std::string> dirs;  // created in the root, in order
  std::vector<FileEntry> files;
  std::vector<SymlinkEntry> symlinks;
  std::vector<BindMount> binds;   // in order, after dirs/files/symlinks
  std::vector<AttachMount> attach;
  std::vector<std::string> proc_mask_files;  // absolute, /dev/null bound over them
  std::vector<std::string> proc_mask_dirs;   // absolute, empty read-only tmpfs over them
  std::vector<std::string> proc_readonly;    // absolute, bound read-only onto themselves
  std::string hostname = "airlock";

  uid_t uid = 1000;  // inside
  gid_t gid = 1000;
  std::vector<Rlimit> rlimits;
  SeccompProgram seccomp;

  // Set in a preloaded interpreter: the payload is init's fork returning
  // into this function (which never returns) instead of an execve.
  InProcessPayload in_process = nullptr;
};

// Uid/gid mapping of a sandbox: inside 0 -> host_base (used only while the
// child builds its tree), inside `uid` -> host_base + 1 (the job's user).
// Neither is ever host uid 0.
struct IdMap {
  uid_t host_base = 3000000;
  std::string uid_map(uid_t inside_uid) const;
  std::string gid_map(gid_t inside_gid) const;
  uid_t host_uid_of_job() const { return host_base + 1; }
};

}  // namespace airlock::sandbox
