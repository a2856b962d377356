#include "sandbox/profile.h"

#include <linux/landlock.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "sandbox/command.h"
#include "sandbox/seccomp_filter.h"

namespace airlock::sandbox {
namespace {

// What every sandbox may write (the tmpfs mounts of jobs/job_sandbox.cc and
// the devices of sandbox/host_image.cc): `standard` names them, so that the
// test of narrowing can check a profile's list against it.
const std::vector<std::string> kStandardWritable = {
    "/output", "/workspace", "/tmp", "/dev/shm", "/dev/null", "/dev/zero", "/dev/full", "/dev/tty"};

std::vector<Profile> make_profiles() {
  Profile standard;
  standard.name = "standard";
  standard.summary = "the default boundary (docs/security.md)";
  standard.writable = kStandardWritable;

  Profile compute;
  compute.name = "compute";
  compute.summary =
      "bounded transformations: no sockets, no new programs or processes (threads allowed), "
      "writes only to /output and /tmp";
  auto deny = [&](const char* name) { compute.layer.push_back({name, LayerAction::kDeny}); };
  // No sockets: AF_UNIX socketpair stays (the job filter allows it for
  // AF_UNIX only), nothing can be created, named, reached or accepted.
  for (const char* name : {"socket", "connect", "bind", "listen", "accept", "accept4"}) deny(name);
  // No program after the first: init counts execs (sandbox/init.cc).
  compute.layer.push_back({"execve", LayerAction::kExecOnce});
  compute.layer.push_back({"execveat", LayerAction::kExecOnce});
  // No new processes, threads allowed: clone only with CLONE_THREAD (which
  // the kernel accepts only with CLONE_SIGHAND and CLONE_VM: a thread shares
  // everything). clone3 keeps its flags in memory: ENOSYS, as in the job
  // filter, so that glibc's pthread_create falls back to clone.
  deny("fork");
  deny("vfork");
  compute.layer.push_back({"clone", LayerAction::kDeny, 0, CLONE_THREAD, 0});
  compute.layer.push_back({"clone3", LayerAction::kNoSys});
  compute.restrict_writes = true;
  compute.writable = {"/output", "/tmp", "/dev/null", "/dev/zero", "/dev/full"};
  compute.network = false;
  compute.sessions = false;
  compute.env = {{"HOME", "/tmp"}, {"MPLCONFIGDIR", "/tmp/matplotlib"}};
  return {standard, compute};
}

const std::vector<Profile>& profiles() {
  static const std::vector<Profile> list = make_profiles();
  return list;
}

const char* action_name(LayerAction a) {
  switch (a) {
    case LayerAction::kDeny:
      return "EPERM";
    case LayerAction::kNoSys:
      return "ENOSYS";
    case LayerAction::kExecOnce:
      return "first-exec-only";
  }
  return "?";
}

}  // namespace

std::span<const Profile> all_profiles() { return profiles(); }

const Profile* find_profile(std::string_view name) {
  for (const Profile& p : profiles())
    if (p.name == name) return &p;
  return nullptr;
}

const Profile& standard_profile() { return profiles().front(); }

std::string profile_names() {
  std::string out;
  for (const Profile& p : profiles()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

std::string profile_json(const Profile& p) {
  nlohmann::json layer = nlohmann::json::array();
  for (const LayerRule& r : p.layer) {
    nlohmann::json rule = {{"syscall", r.syscall}, {"action", action_name(r.action)}};
    if (r.arg >= 0) rule["when"] = {{"arg", r.arg}, {"mask", r.mask}, {"equals", r.value}};
    layer.push_back(rule);
  }
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : p.env) env[k] = v;
  nlohmann::json doc = {{"name", p.name},         {"base", "standard"},
                        {"seccomp_layer", layer}, {"restrict_writes", p.restrict_writes},
                        {"writable", p.writable}, {"network", p.network},
                        {"sessions", p.sessions}, {"env", env}};
  return doc.dump();  // nlohmann's object keeps keys sorted: canonical
}

std::string profile_digest(const Profile& p) { return "sha256:" + Sha256::of(profile_json(p)); }

std::string profile_refusal(const Profile& p, bool names_network_destinations) {
  if (names_network_destinations && !p.network)
    return "profile " + p.name +
           " allows no network: the job may not name destinations (--allow); "
           "its sandbox can open no socket, so neither the egress gateway nor loopback can be used";
  return "";
}

Status apply_profile(const Profile& p,
                     const std::vector<std::pair<std::string, std::string>>& user_env,
                     Command& command) {
  auto layer = build_layer_filter(p.layer);
  if (!layer) return std::unexpected(layer.error());
  command.layer = std::move(layer->instructions);
  command.restrict_writes = p.restrict_writes;
  command.writable = p.restrict_writes ? p.writable : std::vector<std::string>{};
  if (p.restrict_writes &&
      ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION) < 1)
    return fail_errno("profile " + p.name +
                      " needs Landlock (Linux 5.13 or later, 'landlock' in the lsm= list)");
  for (const auto& [name, value] : p.env) {
    if (std::ranges::any_of(user_env, [&](const auto& u) { return u.first == name; })) continue;
    std::string prefix = name + "=";
    std::erase_if(command.env, [&](const std::string& e) { return e.starts_with(prefix); });
    command.env.push_back(prefix + value);
  }
  return {};
}

}  // namespace airlock::sandbox
