#include "pool/obtain_sandbox.h"

#include <unistd.h>

#include "pool/handover.h"
#include "pool/image_python.h"
#include "sandbox/preload_python.h"

namespace airlock::jobs {
namespace {

// From the pool; when `wait` (the job asked for this kind only), waits up to
// 5 s while the pool refills an empty class (the only kUnavailable answer).
Result<PreparedSandbox> take_waiting(const std::string& socket, const std::string& key,
                                     sandbox::CgroupBackend& cgroups, bool wait) {
  for (int i = 0;; ++i) {
    auto taken = take_from_pool(socket, key, cgroups);
    if (taken || !wait || i >= 1000 || taken.error().kind != ErrorKind::kUnavailable) return taken;
    ::usleep(5000);
  }
}

}  // namespace

Status obtain_sandbox(const RunRequest& req, const RunEnvironment& env, const sandbox::Command& command,
                      const ImageSource& image, JobRecord& rec, std::optional<PreparedSandbox>& sb) {
  const JobPolicy& p = req.policy;
  // The python3.X names of a Python job are the image's (its python3's version);
  // a cold start does not ask (it would mount the image once more, for nothing).
  bool python_job = false;
  if (req.start != "cold") {
    auto version = job_python_version(image, env.state_dir + "/cache");
    if (!version && version.error().kind != ErrorKind::kNotFound && req.start == "preloaded")
      return fail("--start preloaded: the image's Python: " + version.error().what);
    python_job = version && sandbox::preloadable(command.argv, command.env, *version);
  }
  if (req.start == "preloaded" && !python_job)
    return fail("--start preloaded runs only python3 SCRIPT, python3 -c CODE or python3 -m MODULE "
                "(with no PYTHON* variables)");
  if (req.start != "cold") {
    std::string why;
    for (bool preloaded : {true, false}) {
      if (preloaded && (!python_job || req.start == "warm")) continue;
      if (!preloaded && req.start == "preloaded") continue;
      std::string socket = env.pool_socket.empty() ? pool_socket_path(env.state_dir) : env.pool_socket;
      auto taken = take_waiting(socket, sandbox_class_key(p, image_class(image), preloaded), *env.cgroups,
                                /*wait=*/req.start != "auto");
      if (!taken) {
        why = taken.error().what;  // the job starts cold (auto) or fails with it
      } else {
        sb.emplace(std::move(*taken));
        if (auto st = fit_to_policy(*sb, p); !st) return st;
        rec.start_kind = std::string(start_kind_name(preloaded ? StartKind::kPreloaded : StartKind::kWarm));
        rec.prepared = "ahead";
        return {};
      }
    }
    rec.start_note = why;
    if (req.start != "auto") return fail("no " + req.start + " sandbox: " + why);
  }
  PrepareContext context{env.state_dir, env.cgroups, nullptr};
  context.image = image;
  auto made = prepare_sandbox(p, context);
  if (!made) return std::unexpected(made.error());
  sb.emplace(std::move(*made));
  rec.start_kind = std::string(start_kind_name(StartKind::kCold));
  rec.prepared = "on_demand";
  return {};
}

}  // namespace airlock::jobs
