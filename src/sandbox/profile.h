// Profiles: named boundaries, as data. `standard` is the job filter, mounts
// and limits every sandbox has; a narrower profile adds to it, never takes
// away: a second seccomp layer stacked on the job filter (the kernel applies
// the stricter verdict of the two), a Landlock ruleset that leaves only some
// of the writable mounts writable, no network destinations, a few
// environment defaults. The profile's canonical JSON (profile_json) is what
// its digest is the sha256 of; the job record keeps name and digest.
// docs/profiles.md describes each one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace airlock::sandbox {

struct Command;

// What the profile's seccomp layer answers for a syscall.
enum class LayerAction {
  kDeny,      // EPERM
  kNoSys,     // ENOSYS (clone3: glibc then falls back to clone)
  kExecOnce,  // a user notification: the sandbox's init lets the job's first
              // program start and refuses every later exec with EPERM
};

// `action` for `syscall` when (argument `arg` & mask) == value, or always
// when arg < 0. The low 32 bits of the argument are compared.
struct LayerRule {
  std::string syscall;
  LayerAction action = LayerAction::kDeny;
  int arg = -1;
  uint64_t mask = 0;
  uint64_t value = 0;
};

struct Profile {
  std::string name;
  std::string summary;           // one line, for `airlock run --help` and errors
  std::vector<LayerRule> layer;  // empty: no second seccomp layer
  // Absolute paths that stay writable. Only enforced (by Landlock) when
  // restrict_writes; then nothing else is.
  bool restrict_writes = false;
  std::vector<std::string> writable;
  bool network = true;   // may a job name network destinations (the gateway)?
  bool sessions = true;  // may a session use it? (a session's keeper forks and execs kernels)
  // Environment defaults (HOME ...); the job's own --env still overrides.
  std::vector<std::pair<std::string, std::string>> env;
};

// Every profile, `standard` first.
std::span<const Profile> all_profiles();
// nullptr for an unknown name.
const Profile* find_profile(std::string_view name);
const Profile& standard_profile();
// "standard, compute": for error messages.
std::string profile_names();

// Canonical JSON of the profile (sorted keys, no whitespace), and
// "sha256:" + sha256 of it.
std::string profile_json(const Profile& profile);
std::string profile_digest(const Profile& profile);

// Empty when `profile` can be used with these settings; otherwise why not,
// in one line for the record's reason.
std::string profile_refusal(const Profile& profile, bool names_network_destinations);

// Puts the profile's narrowing into the job's command (its seccomp layer,
// built here, and the writable paths) and its environment defaults where
// the user's own variables (`user_env`) do not set them. Fails when this
// host cannot enforce the profile (Landlock missing).
Status apply_profile(const Profile& profile,
                     const std::vector<std::pair<std::string, std::string>>& user_env,
                     Command& command);

}  // namespace airlock::sandbox
