// airlock keys create|list|revoke: API keys of the job service, administered
// locally on its data directory (the daemon may be running).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdlib>

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/strings.h"
#include "base/unique_fd.h"
#include "store/checkpoint.h"
#include "store/store.h"

using airlock::store::Store;

namespace {

const char* const kKeysUsage =
    "usage: airlock keys create --tenant NAME [--scopes run,read] [--name NAME] [--data-dir DIR]\n"
    "                           [--database-url URL]\n"
    "       airlock keys list [--tenant NAME] [--data-dir DIR]\n"
    "       airlock keys revoke KEY_ID [--data-dir DIR]\n"
    "       airlock keys checkpoint-key --out PATH [--data-dir DIR]\n"
    "  Scopes: run, read, publish, admin. `create` makes the tenant if it does not exist and\n"
    "  prints the key's secret once on stdout. DIR defaults to $AIRLOCK_DATA_DIR or\n"
    "  /var/lib/airlock/service. `checkpoint-key` writes a new Ed25519 key for signed\n"
    "  checkpoints to PATH (0600, never inside DIR) and its public half to PATH.pub.\n";

struct KeysArgs {
  std::string verb;
  std::vector<std::string> positional;
  std::string data_dir = airlock::store::default_data_dir();
  std::string database_url;  // "": SQLite in data_dir
  std::optional<std::string> tenant, name, scopes, out;
};

int usage_error(const std::string& what) {
  std::fprintf(stderr, "airlock: %s\n%s", what.c_str(), kKeysUsage);
  return 125;
}

// Accepts "--opt VALUE" and "--opt=VALUE"; returns an error text or "".
std::string parse(const std::vector<std::string>& args, KeysArgs& out) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      if (out.verb.empty())
        out.verb = arg;
      else
        out.positional.push_back(arg);
      continue;
    }
    std::string value;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return arg + " needs a value";
    }
    if (arg == "--data-dir")
      out.data_dir = value;
    else if (arg == "--database-url")
      out.database_url = value;
    else if (arg == "--tenant")
      out.tenant = value;
    else if (arg == "--name")
      out.name = value;
    else if (arg == "--scopes")
      out.scopes = value;
    else if (arg == "--out")
      out.out = value;
    else
      return "unknown option " + arg;
  }
  return "";
}

std::set<std::string> split_commas(const std::string& text) {
  std::set<std::string> out;
  for (auto& part : airlock::split(text, ','))
    if (!part.empty()) out.insert(std::move(part));
  return out;
}

// Opens an existing store; only `create` may make a new data directory.
// With a database_url the rows are in PostgreSQL (docs/store.md "PostgreSQL").
std::unique_ptr<Store> open_store(const std::string& data_dir, bool create, const std::string& database_url) {
  struct stat st{};
  if (!create && database_url.empty() && ::stat((data_dir + "/airlock.db").c_str(), &st) < 0) {
    std::fprintf(stderr, "airlock: no store in %s (no keys were created there)\n", data_dir.c_str());
    return nullptr;
  }
  airlock::store::StoreOptions options = airlock::store::StoreOptions::defaults();
  options.database_url = database_url;
  auto store = Store::open(data_dir, options);
  if (!store) {
    std::fprintf(stderr, "airlock: cannot open the store: %s\n", store.error().message().c_str());
    return nullptr;
  }
  return std::move(*store);
}

int create(const KeysArgs& a) {
  if (!a.tenant) return usage_error("keys create needs --tenant NAME");
  if (!a.positional.empty()) return usage_error("unexpected argument " + a.positional[0]);
  auto scopes = split_commas(a.scopes.value_or("run,read"));
  if (auto st = airlock::store::check_scopes(scopes); !st) return usage_error(st.error().message());
  auto store = open_store(a.data_dir, true, a.database_url);
  if (!store) return 1;
  auto tenant = store->tenant_by_name(*a.tenant);
  if (!tenant) {
    std::fprintf(stderr, "airlock: %s\n", tenant.error().message().c_str());
    return 1;
  }
  bool new_tenant = !*tenant;
  if (new_tenant) {
    auto created = store->create_tenant(*a.tenant, {});
    if (!created) {
      std::fprintf(stderr, "airlock: %s\n", created.error().message().c_str());
      return 1;
    }
    *tenant = *created;
  }
  auto key = store->create_key((*tenant)->id, a.name.value_or(""), scopes);
  if (!key) {
    std::fprintf(stderr, "airlock: %s\n", key.error().message().c_str());
    return 1;
  }
  std::string scope_list;
  for (const auto& s : key->first.scopes) scope_list += (scope_list.empty() ? "" : ",") + s;
  std::fprintf(stderr, "airlock: key %s for %stenant %s (%s), scopes %s\n", key->first.id.c_str(),
               new_tenant ? "new " : "", (*tenant)->name.c_str(), (*tenant)->id.c_str(),
               scope_list.c_str());
  std::fprintf(stderr,
               "airlock: the secret below is shown only now and cannot be recovered "
               "(only its hash is kept): store it\n");
  std::printf("%s\n", key->second.c_str());
  return 0;
}

int list(const KeysArgs& a) {
  if (!a.positional.empty()) return usage_error("unexpected argument " + a.positional[0]);
  auto store = open_store(a.data_dir, false, a.database_url);
  if (!store) return 1;
  auto tenants = store->tenants();
  if (!tenants) {
    std::fprintf(stderr, "airlock: %s\n", tenants.error().message().c_str());
    return 1;
  }
  std::map<std::string, std::string> names;
  std::string tenant_id;
  for (const auto& t : *tenants) {
    names[t.id] = t.name;
    if (a.tenant && t.name == *a.tenant) tenant_id = t.id;
  }
  if (a.tenant && tenant_id.empty()) {
    std::fprintf(stderr, "airlock: no tenant named '%s'\n", a.tenant->c_str());
    return 1;
  }
  auto keys = store->keys(tenant_id);
  if (!keys) {
    std::fprintf(stderr, "airlock: %s\n", keys.error().message().c_str());
    return 1;
  }
  std::printf("%-16s  %-16s  %-20s  %-24s  %-24s  %s\n", "KEY", "TENANT", "NAME", "SCOPES",
              "CREATED", "STATUS");
  for (const auto& k : *keys) {
    std::string scopes;
    for (const auto& s : k.scopes) scopes += (scopes.empty() ? "" : ",") + s;
    std::printf("%-16s  %-16s  %-20s  %-24s  %-24s  %s\n", k.id.c_str(), names[k.tenant_id].c_str(),
                k.name.c_str(), scopes.c_str(), k.created_at.c_str(),
                k.revoked ? "revoked" : "active");
  }
  return 0;
}

int revoke(const KeysArgs& a) {
  if (a.positional.size() != 1) return usage_error("keys revoke needs one KEY_ID");
  auto store = open_store(a.data_dir, false, a.database_url);
  if (!store) return 1;
  if (auto st = store->revoke_key(a.positional[0]); !st) {
    std::fprintf(stderr, "airlock: %s\n", st.error().message().c_str());
    return 1;
  }
  std::printf("revoked %s\n", a.positional[0].c_str());
  return 0;
}

// The real path of `path`'s folder joined with its last component, "" if the folder does not exist.
std::string resolved(const std::string& path) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  char buf[PATH_MAX];
  if (::realpath(dir.c_str(), buf) == nullptr) return "";
  return std::string(buf) + "/" + path.substr(slash == std::string::npos ? 0 : slash + 1);
}

bool inside(const std::string& path, const std::string& dir) {
  return path == dir || path.rfind(dir + "/", 0) == 0;
}

// Creates `path` (it must not exist) with `mode` and writes `text`, synced.
bool write_new(const std::string& path, const std::string& text, mode_t mode) {
  airlock::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd) {
    std::fprintf(stderr, "airlock: cannot create %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  if (::fchmod(fd.get(), mode) < 0 ||
      ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::fsync(fd.get()) < 0) {
    std::fprintf(stderr, "airlock: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

int checkpoint_key(const KeysArgs& a) {
  if (!a.out) return usage_error("keys checkpoint-key needs --out PATH");
  if (!a.positional.empty()) return usage_error("unexpected argument " + a.positional[0]);
  std::string out = resolved(*a.out);
  if (out.empty()) return usage_error("the folder of " + *a.out + " does not exist");
  // The key anchors the chains against someone who can write the data
  // directory: kept there, it would be theirs too.
  char buf[PATH_MAX];
  if (::realpath(a.data_dir.c_str(), buf) != nullptr && inside(out, buf)) {
    std::fprintf(stderr, "airlock: refusing %s: it is inside the data directory %s\n",
                 a.out->c_str(), buf);
    return 1;
  }
  auto key = airlock::store::generate_checkpoint_key();
  if (!key) {
    std::fprintf(stderr, "airlock: %s\n", key.error().message().c_str());
    return 1;
  }
  auto priv = airlock::store::private_key_pem(key->get());
  auto pub = airlock::store::public_key_pem(key->get());
  auto id = airlock::store::checkpoint_key_id(key->get());
  if (!priv || !pub || !id) {
    std::fprintf(stderr, "airlock: cannot encode the checkpoint key\n");
    return 1;
  }
  if (!write_new(*a.out, *priv, 0600)) return 1;
  if (!write_new(*a.out + ".pub", *pub, 0644)) {
    ::unlink(a.out->c_str());
    return 1;
  }
  std::printf("checkpoint key %s: %s (public: %s.pub)\n", id->c_str(), a.out->c_str(),
              a.out->c_str());
  return 0;
}

}  // namespace

int keys_command(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    std::fputs(kKeysUsage, stdout);
    return 0;
  }
  KeysArgs a;
  if (std::string err = parse(args, a); !err.empty()) return usage_error(err);
  if (a.verb == "create") return create(a);
  if (a.verb == "list") return list(a);
  if (a.verb == "revoke") return revoke(a);
  if (a.verb == "checkpoint-key") return checkpoint_key(a);
  return usage_error(a.verb.empty() ? "keys needs create, list, revoke or checkpoint-key"
                                    : "unknown keys command '" + a.verb + "'");
}
