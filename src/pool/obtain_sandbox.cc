#include "pool/obtain_sandbox.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/unique_fd.h"
#include "pool/handover.h"
#include "pool/image_python.h"
#include "pool/preload_choice.h"
#include "sandbox/preload_python.h"
#include "sys/file_io.h"

namespace airlock::jobs {
namespace {

constexpr size_t kMaxScannedScript = 1 << 20;

// A ready sandbox of the first class in `keys` that has one. When `wait`
// (the job asked for this kind only), waits up to 5 s while the pool refills
// empty classes (the only kUnavailable answer); a class the pool does not
// keep (kNotFound) is passed over. Returns the index of the class it took.
Result<std::pair<size_t, PreparedSandbox>> take_first(const std::string& socket,
                                                      const std::vector<std::string>& keys,
                                                      sandbox::CgroupBackend& cgroups, bool wait,
                                                      const std::string& tenant) {
  AIRLOCK_CHECK(!keys.empty());
  for (int i = 0;; ++i) {
    std::optional<Error> why;
    for (size_t k = 0; k < keys.size(); ++k) {
      auto taken = take_from_pool(socket, keys[k], cgroups, tenant);
      if (taken) return std::pair{k, std::move(*taken)};
      // The first class's reason, unless a later one is only empty right now.
      if (!why || (taken.error().kind == ErrorKind::kUnavailable && why->kind != ErrorKind::kUnavailable))
        why = taken.error();
    }
    if (!why || !wait || i >= 1000 || why->kind != ErrorKind::kUnavailable) return std::unexpected(*why);
    ::usleep(5000);
  }
}

// An admitted input's host file, for reading its Python: "" unless it is a
// regular file of at most 1 MiB (never a FIFO that would block).
std::string small_regular_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > static_cast<off_t>(kMaxScannedScript))
    return {};
  auto text = sys::read_all(fd.get(), kMaxScannedScript);
  return text ? *text : std::string();
}

// Which preloaded interpreter suits a Python job (preload_choice.h): from its
// code when airlock has it (-c CODE; -m MODULE; a SCRIPT that is one of the
// job's inputs, /inputs/NAME), else the data stack's.
Preload preload_for(const RunRequest& req, const std::vector<std::string>& argv) {
  if (argv[1] == "-c") return preload_for_source(argv[2]);
  if (argv[1] == "-m") return is_stdlib_module(argv[2].substr(0, argv[2].find('.'))) ? Preload::kStdlib : Preload::kData;
  const std::string prefix = "/inputs/";
  if (argv[1].rfind(prefix, 0) != 0) return Preload::kData;
  std::string name = argv[1].substr(prefix.size());
  for (const auto& path : req.inputs) {
    if (path.substr(path.rfind('/') + 1) != name) continue;
    std::string source = small_regular_file(path);
    return source.empty() ? Preload::kData : preload_for_source(source);
  }
  return Preload::kData;
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
    // The classes to try, in order: the job's preloaded interpreter (a job
    // that imports only standard modules may also take the data stack's),
    // then a warm sandbox.
    std::vector<std::optional<Preload>> order;  // none: a warm sandbox
    if (python_job && req.start != "warm") {
      Preload first = preload_for(req, command.argv);
      order.push_back(first);
      if (first == Preload::kStdlib) order.push_back(Preload::kData);
    }
    if (req.start != "preloaded") order.push_back(std::nullopt);
    std::vector<std::string> keys;
    for (const auto& c : order) keys.push_back(sandbox_class_key(p, image_class(image), c));
    std::string socket = env.pool_socket.empty() ? pool_socket_path(env.state_dir) : env.pool_socket;
    auto taken = take_first(socket, keys, *env.cgroups, /*wait=*/req.start != "auto", env.tenant);
    if (taken) {
      const std::optional<Preload>& c = order[taken->first];
      sb.emplace(std::move(taken->second));
      if (auto st = fit_to_policy(*sb, p); !st) return st;
      rec.start_kind = std::string(start_kind_name(c ? StartKind::kPreloaded : StartKind::kWarm));
      if (c) rec.interpreter = std::string(preload_name(*c));
      rec.prepared = "ahead";
      return {};
    }
    rec.start_note = taken.error().what;  // the job starts cold (auto) or fails with it
    if (req.start != "auto") return fail("no " + req.start + " sandbox: " + taken.error().what);
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
