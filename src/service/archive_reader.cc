#include "service/archive_reader.h"

#include <fcntl.h>
#include <grp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "service/job_process.h"
#include "service/log_buffer.h"
#include "validate/archive_scan.h"
#include "validate/libarchive.h"
#include "validate/text.h"
#include "workspace/file_type.h"

namespace airlock::service {
namespace {

using nlohmann::json;

constexpr uint64_t kAddressSpace = 512ull << 20;
constexpr rlim_t kCpuSeconds = 10;
constexpr unsigned kWallSeconds = 20;
constexpr uint64_t kAnswerBytes = 32ull << 20;  // 10000 members with long names, and the .rels texts
constexpr uid_t kNobody = 65534;

Status limit(int resource, rlim_t value, const char* what) {
  rlimit r{value, value};
  if (::setrlimit(resource, &r) < 0) return fail_errno(std::string("setrlimit ") + what);
  return {};
}

// The syscalls a libarchive walk over an open fd needs; everything else fails
// with EPERM. mmap and mprotect never with PROT_EXEC.
Status install_filter() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (!ctx) return fail("seccomp_init failed");
  int rc = 0;
  for (int nr : {SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(newfstatat),
                 SCMP_SYS(lseek), SCMP_SYS(pread64), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(brk),
                 SCMP_SYS(madvise), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
                 SCMP_SYS(rt_sigprocmask), SCMP_SYS(futex), SCMP_SYS(getrandom), SCMP_SYS(clock_gettime),
                 SCMP_SYS(gettid), SCMP_SYS(getpid)})
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) return fail("seccomp filter: error " + std::to_string(rc));
  return {};
}

Status confine() {
  // Libraries that would load files on first use do it now, before open is gone.
  if (auto lib = validate::libarchive(); !lib) return std::unexpected(lib.error());
  (void)Sha256::of("warm up");
  (void)workspace::detect_type("warm,up\n1,2\n");
  if (auto s = limit(RLIMIT_AS, kAddressSpace, "RLIMIT_AS"); !s) return s;
  if (auto s = limit(RLIMIT_CPU, kCpuSeconds, "RLIMIT_CPU"); !s) return s;
  // stdout may be a file (a test, a shell): the answer fits, nothing else can be opened.
  if (auto s = limit(RLIMIT_FSIZE, kAnswerBytes, "RLIMIT_FSIZE"); !s) return s;
  if (auto s = limit(RLIMIT_CORE, 0, "RLIMIT_CORE"); !s) return s;
  ::alarm(kWallSeconds);  // SIGALRM's default action ends the process
  if (::geteuid() == 0) {
    if (::setgroups(0, nullptr) < 0) return fail_errno("setgroups");
    if (::setresgid(kNobody, kNobody, kNobody) < 0) return fail_errno("setresgid");
    if (::setresuid(kNobody, kNobody, kNobody) < 0) return fail_errno("setresuid");
  }
  if (::prctl(PR_SET_DUMPABLE, 0) < 0) return fail_errno("PR_SET_DUMPABLE");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return fail_errno("PR_SET_NO_NEW_PRIVS");
  return install_filter();
}

validate::ArchiveScanOptions options_from_json(const json& j) {
  validate::ArchiveScanOptions o;
  if (j.is_object()) {
    o.type_members = j.value("type_members", false);
    o.keep_rels = j.value("keep_rels", false);
  }
  return o;
}

Result<validate::ArchiveScan> read_one(const std::string& binary, const std::string& path,
                                       const validate::ArchiveBounds& bounds, const validate::ArchiveScanOptions& options) {
  json opts = {{"type_members", options.type_members}, {"keep_rels", options.keep_rels}};
  auto process = JobProcess::spawn(binary, {"inspect-archive", path, validate::bounds_to_json(bounds).dump(), opts.dump()});
  if (!process) return fail("archive reader: start " + binary + ": " + process.error().message());
  LogBuffer log(kAnswerBytes);
  auto status = process->pump_and_wait(log);
  std::string out, err;
  for (const auto& c : log.after(0)) (c.is_stderr ? err : out) += c.text;
  if (!status) return fail("archive reader: " + status.error().message());
  if (*status != 0) {
    std::string why = *status == 128 + SIGKILL  ? " (killed: its memory or CPU limit)"
                      : *status == 128 + SIGXCPU ? " (its CPU limit of 10 s)"
                      : *status == 128 + SIGALRM ? " (its wall-time limit of 20 s)"
                      : *status == 128 + SIGSEGV ? " (a crash of the parser, contained)"
                                                 : "";
    if (err.size() > 240) err = "..." + err.substr(err.size() - 240);
    return fail("libarchive in its confined process ended with status " + std::to_string(*status) + why +
                (err.empty() ? "" : "; stderr: " + validate::printable(err, 300, false)));
  }
  if (log.truncated()) return fail("archive reader: an answer over " + std::to_string(kAnswerBytes) + " bytes");
  json answer = json::parse(out, nullptr, false);
  return validate::scan_from_json(answer, bounds);
}

}  // namespace

validate::ArchiveReader confined_archive_reader(std::string airlock_binary, std::map<std::string, std::string> outputs) {
  return [binary = std::move(airlock_binary), outputs = std::move(outputs)](
             const std::string& name, const validate::ArchiveBounds& bounds,
             const validate::ArchiveScanOptions& options) -> Result<validate::ArchiveScan> {
    auto it = outputs.find(name);
    if (it == outputs.end()) return fail("no accepted output named " + validate::in_quotes(name, 300));
    return read_one(binary, it->second, bounds, options);
  };
}

int inspect_archive_main(const std::vector<std::string>& args) {
  if (args.size() != 3) {
    std::fprintf(stderr, "airlock: usage: airlock inspect-archive PATH BOUNDS_JSON OPTIONS_JSON (internal)\n");
    return 2;
  }
  auto bounds = validate::bounds_from_json(json::parse(args[1], nullptr, false));
  if (!bounds) {
    std::fprintf(stderr, "airlock inspect-archive: %s\n", bounds.error().message().c_str());
    return 2;
  }
  auto options = options_from_json(json::parse(args[2], nullptr, false));
  UniqueFd fd(::open(args[0].c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    std::fprintf(stderr, "airlock inspect-archive: open %s: %m\n", args[0].c_str());
    return 2;
  }
  if (auto s = confine(); !s) {
    std::fprintf(stderr, "airlock inspect-archive: confine: %s\n", s.error().message().c_str());
    return 2;
  }
  auto scan = validate::scan_archive_fd(fd.get(), *bounds, options);
  if (!scan) {
    std::fprintf(stderr, "airlock inspect-archive: %s\n", scan.error().message().c_str());
    return 2;
  }
  std::string answer = validate::scan_to_json(*scan).dump(-1, ' ', false, json::error_handler_t::replace);
  for (size_t at = 0; at < answer.size();) {
    ssize_t n = ::write(1, answer.data() + at, answer.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 2;
    at += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace airlock::service
