// airlock verify: recomputes every tenant's record chain in the service's store,
// and with --checkpoints compares the chains with signed checkpoints kept elsewhere.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/terminal_text.h"
#include "store/checkpoint.h"
#include "store/checkpoint_check.h"
#include "store/store.h"

namespace {

const char* const kVerifyUsage =
    "usage: airlock verify [--data-dir DIR] [--database-url URL] [--content-dir DIR]\n"
    "                      [--checkpoints FILE --checkpoint-public-key PEM]\n"
    "  Recomputes every record chain. Exit 0: intact; exit 1: the problems found, one a line.\n"
    "  With --checkpoints, also checks every line's signature (PEM: the public key, or the\n"
    "  checkpoint key itself) and that each checkpoint's seq still has the signed hash, so a\n"
    "  chain recomputed after a rewrite is found too; and that every retention record after a\n"
    "  tenant's first checkpoint is signed by the same key and removed nothing younger than\n"
    "  its retention_days, so records deleted behind the service's back are found too.\n"
    "  DIR defaults to $AIRLOCK_DATA_DIR or /var/lib/airlock/service; --content-dir is the\n"
    "  service's content_dir when it has one (the artifacts are checked there).\n";

struct VerifyArgs {
  std::string data_dir = airlock::store::default_data_dir();
  std::string database_url;  // "": SQLite in data_dir
  std::string content_dir;   // "": data_dir
  std::string checkpoints, public_key;
};

std::string parse(const std::vector<std::string>& args, VerifyArgs& out) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i], value;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return "unexpected argument " + arg;
    }
    if (arg == "--data-dir") out.data_dir = value;
    else if (arg == "--database-url") out.database_url = value;
    else if (arg == "--content-dir") out.content_dir = value;
    else if (arg == "--checkpoints") out.checkpoints = value;
    else if (arg == "--checkpoint-public-key") out.public_key = value;
    else return "unknown option " + arg;
  }
  if (out.checkpoints.empty() != out.public_key.empty())
    return "--checkpoints and --checkpoint-public-key go together";
  return "";
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

}  // namespace

int verify_command(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(kVerifyUsage, stdout);
    return 0;
  }
  VerifyArgs a;
  if (auto err = parse(args, a); !err.empty()) {
    std::fprintf(stderr, "airlock: %s\n%s", err.c_str(), kVerifyUsage);
    return 125;
  }
  struct stat st{};
  if (a.database_url.empty() && ::stat((a.data_dir + "/airlock.db").c_str(), &st) < 0) {
    std::fprintf(stderr, "airlock: no store in %s\n", a.data_dir.c_str());
    return 125;
  }
  airlock::store::EvpKey key;
  std::string checkpoint_text;
  if (!a.checkpoints.empty()) {
    std::string pem;
    if (!read_file(a.public_key, pem)) {
      std::fprintf(stderr, "airlock: cannot read %s\n", a.public_key.c_str());
      return 125;
    }
    auto k = airlock::store::read_public_key_pem(pem);
    if (!k) {
      std::fprintf(stderr, "airlock: %s: %s\n", a.public_key.c_str(), k.error().message().c_str());
      return 125;
    }
    key = std::move(*k);
    if (!read_file(a.checkpoints, checkpoint_text)) {
      std::fprintf(stderr, "airlock: cannot read %s\n", a.checkpoints.c_str());
      return 125;
    }
  }
  airlock::store::StoreOptions options = airlock::store::StoreOptions::defaults();
  options.database_url = a.database_url;
  options.content_dir = a.content_dir;
  auto store = airlock::store::Store::open(a.data_dir, options);
  if (!store) {
    std::fprintf(stderr, "airlock: cannot open the store: %s\n", store.error().message().c_str());
    return 125;
  }
  auto report = (*store)->verify();
  if (!report) {
    std::fprintf(stderr, "airlock: verify failed: %s\n", report.error().message().c_str());
    return 125;
  }
  long checkpoints = 0;
  if (key) {
    auto checked = airlock::store::check_checkpoints(**store, checkpoint_text, key.get());
    if (!checked) {
      std::fprintf(stderr, "airlock: verify failed: %s\n", checked.error().message().c_str());
      return 125;
    }
    checkpoints = checked->checked;
    report->problems.insert(report->problems.end(), checked->problems.begin(),
                            checked->problems.end());
  }
  if (report->problems.empty()) {
    std::printf("%llu records, chains intact", static_cast<unsigned long long>(report->records));
    if (key) std::printf(", %ld checkpoints match", checkpoints);
    std::printf("\n");
    return 0;
  }
  // A problem quotes stored names (artifacts, snapshot paths) or file text: one inert line each.
  for (const auto& p : report->problems)
    std::printf("%s\n", airlock::quoted_text(p).c_str());
  std::fprintf(stderr, "airlock: %zu problem(s) in %llu records\n", report->problems.size(),
               static_cast<unsigned long long>(report->records));
  return 1;
}
