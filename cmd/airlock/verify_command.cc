// airlock verify: recomputes every tenant's record chain in the service's store.
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/terminal_text.h"
#include "store/store.h"

namespace {

const char* const kVerifyUsage =
    "usage: airlock verify [--data-dir DIR]\n"
    "  Recomputes every record chain. Exit 0: intact; exit 1: the problems found, one a line.\n"
    "  DIR defaults to $AIRLOCK_DATA_DIR or /var/lib/airlock/service.\n";

}  // namespace

int verify_command(const std::vector<std::string>& args) {
  std::string data_dir = airlock::store::default_data_dir();
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(kVerifyUsage, stdout);
    return 0;
  }
  if (args.size() == 2 && args[0] == "--data-dir") {
    data_dir = args[1];
  } else if (args.size() == 1 && args[0].rfind("--data-dir=", 0) == 0) {
    data_dir = args[0].substr(11);
  } else if (!args.empty()) {
    std::fprintf(stderr, "airlock: %s", kVerifyUsage);
    return 125;
  }
  struct stat st{};
  if (::stat((data_dir + "/airlock.db").c_str(), &st) < 0) {
    std::fprintf(stderr, "airlock: no store in %s\n", data_dir.c_str());
    return 125;
  }
  auto store = airlock::store::Store::open(data_dir);
  if (!store) {
    std::fprintf(stderr, "airlock: cannot open the store: %s\n", store.error().message().c_str());
    return 125;
  }
  auto report = (*store)->verify();
  if (!report) {
    std::fprintf(stderr, "airlock: verify failed: %s\n", report.error().message().c_str());
    return 125;
  }
  if (report->ok) {
    std::printf("%llu records, chains intact\n", static_cast<unsigned long long>(report->records));
    return 0;
  }
  // A problem quotes stored names (artifacts, snapshot paths): one inert line each.
  for (const auto& p : report->problems)
    std::printf("%s\n", airlock::terminal_safe(p, airlock::Newlines::kEscape).c_str());
  std::fprintf(stderr, "airlock: %zu problem(s) in %llu records\n", report->problems.size(),
               static_cast<unsigned long long>(report->records));
  return 1;
}
