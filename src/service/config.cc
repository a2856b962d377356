#include "service/config.h"
#include "service/config_keys.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "base/nesting.h"
#include "base/toml_parse.h"
#include "images/image_ref.h"
#include "store/postgres.h"
#include "store/store.h"
#include "workspace/file_type.h"

namespace airlock::service {
namespace {

constexpr uint64_t kMinKeepaliveMs = 50, kMaxKeepaliveMs = 600'000;
std::string role_problem(const std::string& text) {
  return "role '" + text + "': must be api, worker or all";
}

std::string keepalive_range() { return "event_keepalive_ms is from 50 to 600000"; }

Status parse_listen(const std::string& text, ServiceConfig& c) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return fail("listen '" + text + "' must be HOST:PORT");
  std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535)
    return fail("listen '" + text + "': bad port");
  c.listen_address = text.substr(0, colon);
  c.listen_port = static_cast<uint16_t>(std::stoul(port));
  return {};
}

Result<uint64_t> positive(const std::string& key, const std::string& value) {
  if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string::npos)
    return fail(key + " '" + value + "' must be a whole number");
  return std::stoull(value);
}

nlohmann::json to_json(const toml::value& v) {
  if (v.is_string()) return v.as_string().str;
  if (v.is_integer()) return v.as_integer();
  if (v.is_boolean()) return v.as_boolean();
  if (v.is_floating()) return v.as_floating();
  if (v.is_array()) {
    auto out = nlohmann::json::array();
    for (const auto& e : v.as_array()) out.push_back(to_json(e));
    return out;
  }
  if (v.is_table()) {
    auto out = nlohmann::json::object();
    for (const auto& [k, e] : v.as_table()) out[k] = to_json(e);
    return out;
  }
  return nullptr;
}

// [egress_caps]
// analytics = [{host = "api.example.com", port = 443, tls = true, secret = "example"}, "*.internal.test:80"]
Status parse_egress_caps(const toml::value& value, ServiceConfig& c) {
  if (!value.is_table()) return fail("configuration: egress_caps must be a table of tenant names");
  for (const auto& [tenant, list] : value.as_table()) {
    std::string at = "configuration: egress_caps." + tenant;
    if (!list.is_array()) return fail(at + " must be an array");
    auto rules = nlohmann::json::array();
    for (const auto& entry : list.as_array()) {
      if (entry.is_string()) {
        auto r = egress::parse_allow(entry.as_string().str);
        if (!r) return fail(at + ": " + r.error().what);
        rules.push_back(egress::rule_json(*r));
      } else {
        rules.push_back(to_json(entry));
      }
    }
    auto policy = egress::parse_policy(rules);
    if (!policy) return fail(at + ": " + policy.error().what);
    c.egress_caps[tenant] = std::move(policy->rules);
  }
  return {};
}

// A list of image names (or "host").
Result<std::vector<std::string>> image_names(const toml::value& v, const std::string& at) {
  if (!v.is_array()) return fail(at + " must be a list of image names");
  std::vector<std::string> out;
  for (const auto& item : v.as_array()) {
    if (!item.is_string()) return fail(at + " must be a list of image names");
    const std::string& name = item.as_string();
    if (auto st = images::check_image_name(name); !st) return fail(at + ": " + st.error().message());
    out.push_back(name);
  }
  return out;
}

// [rates]: decimal strings (or whole numbers), never TOML floats, so that a
// rate is exactly what the operator wrote (docs/usage.md).
Status parse_rates(const toml::value& value, ServiceConfig& c) {
  if (!value.is_table()) return fail("configuration: rates must be a table");
  std::map<std::string, std::string> fields;
  for (const auto& [key, v] : value.as_table()) {
    if (v.is_string()) fields[key] = v.as_string();
    else if (v.is_integer() && v.as_integer() >= 0) fields[key] = std::to_string(v.as_integer());
    else
      return fail("configuration: rates." + key + ": write it as a decimal string, e.g. \"0.0000125\" (a TOML float is not exact)");
  }
  auto card = usage::parse_rate_card(fields, c.rates);
  if (!card) return fail("configuration: " + card.error().what);
  c.rates = std::move(*card);
  return {};
}

// [tenants.analytics]
// weight = 3
// max_queued = 20
// storage_mb = 2048
Status parse_tenants(const toml::value& value, ServiceConfig& c) {
  if (!value.is_table()) return fail("configuration: tenants must be a table of tenant names");
  for (const auto& [tenant, table] : value.as_table()) {
    std::string at = "configuration: tenants." + tenant;
    if (!table.is_table()) return fail(at + " must be a table");
    TenantSettings t;
    for (const auto& [key, v] : table.as_table()) {
      if (key == "images") {
        auto names = image_names(v, at + ".images");
        if (!names) return std::unexpected(names.error());
        t.images = std::move(*names);
        continue;
      }
      if (!v.is_integer() || v.as_integer() < 0) return fail(at + "." + key + " must be a whole number");
      auto n = static_cast<uint64_t>(v.as_integer());
      if (key == "weight") {
        if (n < 1 || n > 100) return fail(at + ".weight is from 1 to 100");
        t.weight = static_cast<unsigned>(n);
      } else if (key == "max_queued") {
        t.max_queued = n;
      } else if (key == "storage_mb") {
        if (n > (1ull << 40)) return fail(at + ".storage_mb is too large");
        t.storage_bytes = n << 20;
      } else {
        return fail(at + ": unknown key '" + key + "' (weight, max_queued, storage_mb, images)");
      }
    }
    c.tenants[tenant] = t;
  }
  return {};
}

}  // namespace

size_t tenant_max_queued(const ServiceConfig& c, const std::string& name) {
  if (auto it = c.tenants.find(name); it != c.tenants.end() && it->second.max_queued) return *it->second.max_queued;
  if (c.tenant_max_queued > 0) return c.tenant_max_queued;
  return std::max<size_t>(1, c.max_queued / 4);
}

uint64_t tenant_storage_bytes(const ServiceConfig& c, const std::string& name) {
  if (auto it = c.tenants.find(name); it != c.tenants.end() && it->second.storage_bytes)
    return *it->second.storage_bytes;
  return c.tenant_storage_bytes;
}

bool tenant_may_use_image(const ServiceConfig& c, const std::string& tenant, const std::string& name) {
  auto it = c.tenants.find(tenant);
  if (it == c.tenants.end() || !it->second.images) return true;
  const auto& list = *it->second.images;
  return std::find(list.begin(), list.end(), name) != list.end();
}

unsigned tenant_weight(const ServiceConfig& c, const std::string& name) {
  auto it = c.tenants.find(name);
  return it == c.tenants.end() ? 1 : it->second.weight;
}

const std::set<std::string>& config_file_keys() {
  static const std::set<std::string> keys = {
      "listen", "data_dir", "database_url", "state_dir", "work_dir", "airlock_binary", "http_threads", "max_connections", "max_running", "max_queued",
      "max_upload_mb", "log_buffer_kb", "retention_days", "retention_interval_s", "warm_pool",
      "preloaded_pool", "preloaded_tenants", "preloaded_renew_jobs", "secrets_file", "egress_hosts", "egress_ca", "egress_caps", "max_sessions",
      "max_sessions_per_tenant", "session_idle_timeout_s", "session_max_idle_timeout_s", "session_max_lifetime_s",
      "snapshot_ttl_s", "snapshot_max_mb", "snapshot_expiry_interval_s", "tenant_max_queued", "tenant_storage_mb",
      "tenants", "session_value_cap_kb", "session_html_cap_kb", "session_error_cap_kb", "session_figures_cap_kb",
      "session_kept_calls_mb", "check_cpu_ms", "check_json_kb", "event_keepalive_ms", "image_dir", "default_image",
      "pool_images", "pdf_check_image", "rates", "checkpoint_key", "checkpoint_file", "checkpoint_interval_s",
      "data_requests_per_job", "data_request_bytes", "role", "node_id", "node_address", "node_lease_ms",
      "heartbeat_ms", "content_dir", "node_key", "node_key_file"};
  return keys;
}

Result<ServiceConfig> parse_config(const std::string& text, ServiceConfig c) {
  // TOML is UTF-8 text; toml11 (3.7) reads past its buffer while reporting
  // an invalid UTF-8 sequence in a string, so it never sees one.
  if (workspace::detect_type(text) == workspace::FileType::kBinary)
    return fail("configuration: not UTF-8 text (or a control character other than tab, CR, LF)");
  // toml11's parser recurses into nested arrays and inline tables.
  if (!nesting_within(text, kMaxConfigDepth, NestingSyntax::kToml))
    return fail("configuration: nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
  toml::value root;
  try {
    std::istringstream in(text);
    root = toml::parse(in, "config");
  } catch (const std::exception& e) {
    return fail(std::string("configuration: ") + e.what());
  }
  if (!root.is_table()) return fail("configuration: not a table");
  const std::set<std::string>& known = config_file_keys();
  try {
    for (const auto& [key, value] : root.as_table()) {
      if (!known.count(key)) return fail("configuration: unknown key '" + key + "'");
      if (key == "listen") {
        if (auto st = parse_listen(toml::get<std::string>(value), c); !st) return std::unexpected(st.error());
      } else if (key == "data_dir") {
        c.data_dir = toml::get<std::string>(value);
      } else if (key == "database_url") {
        c.database_url = toml::get<std::string>(value);
        if (!c.database_url.empty() && !store::is_postgres_url(c.database_url))
          return fail("configuration: database_url starts with postgresql:// (or is empty: SQLite)");
      } else if (key == "state_dir") {
        c.state_dir = toml::get<std::string>(value);
      } else if (key == "content_dir") {
        c.content_dir = toml::get<std::string>(value);
      } else if (key == "role") {
        auto role = parse_role(toml::get<std::string>(value));
        if (!role) return fail("configuration: " + role_problem(toml::get<std::string>(value)));
        c.role = *role;
      } else if (key == "node_id") {
        c.node_id = toml::get<std::string>(value);
      } else if (key == "node_address") {
        c.node_address = toml::get<std::string>(value);
      } else if (key == "work_dir") {
        c.work_dir = toml::get<std::string>(value);
      } else if (key == "airlock_binary") {
        c.airlock_binary = toml::get<std::string>(value);
      } else if (key == "pdf_check_image") {
        c.pdf_check_image = toml::get<std::string>(value);
      } else if (key == "secrets_file") {
        c.secrets_file = toml::get<std::string>(value);
      } else if (key == "checkpoint_key") {
        c.checkpoint_key = toml::get<std::string>(value);
      } else if (key == "checkpoint_file") {
        c.checkpoint_file = toml::get<std::string>(value);
      } else if (key == "node_key") {
        c.node_key = toml::get<std::string>(value);
      } else if (key == "node_key_file") {
        c.node_key_file = toml::get<std::string>(value);
      } else if (key == "egress_hosts") {
        c.egress_hosts = toml::get<std::string>(value);
      } else if (key == "egress_ca") {
        c.egress_ca = toml::get<std::string>(value);
      } else if (key == "egress_caps") {
        if (auto st = parse_egress_caps(value, c); !st) return std::unexpected(st.error());
      } else if (key == "image_dir") {
        c.image_dir = toml::get<std::string>(value);
      } else if (key == "default_image") {
        c.default_image = toml::get<std::string>(value);
        if (auto ref = images::parse_image_ref(c.default_image); !ref)
          return fail("configuration: default_image: " + ref.error().message());
      } else if (key == "pool_images") {
        auto names = image_names(value, "configuration: pool_images");
        if (!names) return std::unexpected(names.error());
        c.pool_images = std::move(*names);
      } else if (key == "tenants") {
        if (auto st = parse_tenants(value, c); !st) return std::unexpected(st.error());
      } else if (key == "rates") {
        if (auto st = parse_rates(value, c); !st) return std::unexpected(st.error());
      } else {
        auto n = toml::get<int64_t>(value);
        if (n < 0) return fail("configuration: " + key + " must not be negative");
        auto u = static_cast<uint64_t>(n);
        if (key == "http_threads") c.http_threads = static_cast<int>(std::max<uint64_t>(1, u));
        else if (key == "max_connections") c.max_connections = std::max<uint64_t>(1, u);
        else if (key == "max_running") c.max_running = u;
        else if (key == "node_lease_ms") c.node_lease_ms = u;
        else if (key == "heartbeat_ms") c.heartbeat_ms = u;
        else if (key == "max_queued") c.max_queued = u;
        else if (key == "tenant_max_queued") c.tenant_max_queued = u;
        else if (key == "tenant_storage_mb") {
          if (u > (1ull << 40)) return fail("configuration: tenant_storage_mb is too large");
          c.tenant_storage_bytes = u << 20;
        }
        else if (key == "max_upload_mb") c.max_upload_bytes = u << 20;
        else if (key == "log_buffer_kb") c.log_buffer_bytes = u << 10;
        else if (key == "retention_days") c.retention_days = u;
        else if (key == "retention_interval_s") c.retention_interval_s = std::max<uint64_t>(1, u);
        else if (key == "checkpoint_interval_s") c.checkpoint_interval_s = std::max<uint64_t>(1, u);
        else if (key == "max_sessions") c.max_sessions = u;
        else if (key == "max_sessions_per_tenant") c.max_sessions_per_tenant = u;
        else if (key == "snapshot_ttl_s") c.snapshot_ttl_s = std::max<uint64_t>(1, u);
        else if (key == "snapshot_max_mb") c.snapshot_max_bytes = u << 20;
        else if (key == "session_value_cap_kb") c.session_value_cap_bytes = u << 10;
        else if (key == "session_html_cap_kb") c.session_html_cap_bytes = u << 10;
        else if (key == "session_error_cap_kb") c.session_error_cap_bytes = u << 10;
        else if (key == "session_figures_cap_kb") c.session_figures_cap_bytes = u << 10;
        else if (key == "session_kept_calls_mb") c.session_kept_calls_bytes = u << 20;
        else if (key == "check_cpu_ms") c.check_limits.cpu_ms = u;
        else if (key == "data_requests_per_job") {
          if (u > 64) return fail("configuration: data_requests_per_job is at most 64");
          c.data_request_limits.requests = u;
        }
        else if (key == "data_request_bytes") {
          if (u < 256 || u > (64u << 10)) return fail("configuration: data_request_bytes must be 256..65536");
          c.data_request_limits.bytes_per_request = u;
        }
        else if (key == "check_json_kb") c.check_limits.json_bytes = u << 10;
        else if (key == "event_keepalive_ms") {
          if (u < kMinKeepaliveMs || u > kMaxKeepaliveMs) return fail(keepalive_range());
          c.event_keepalive_ms = u;
        }
        else if (key == "snapshot_expiry_interval_s") c.snapshot_expiry_interval_s = std::max<uint64_t>(1, u);
        else if (key == "session_idle_timeout_s" || key == "session_max_idle_timeout_s" ||
                 key == "session_max_lifetime_s") {
          if (u < 1 || u > 30 * 86'400) return fail("configuration: " + key + " is from 1 to 2592000 seconds");
          int v = static_cast<int>(u);
          if (key == "session_idle_timeout_s") c.session_idle_timeout_s = v;
          else if (key == "session_max_idle_timeout_s") c.session_max_idle_timeout_s = v;
          else c.session_max_lifetime_s = v;
        }
        else if (key == "preloaded_tenants") {
          if (u < 1 || u > 4096) return fail("configuration: preloaded_tenants is from 1 to 4096");
          c.preloaded_tenants = u;
        }
        else if (key == "preloaded_renew_jobs") {
          if (u > 1'000'000) return fail("configuration: preloaded_renew_jobs is at most 1000000 (0: never)");
          c.preloaded_renew_jobs = u;
        }
        else if (key == "warm_pool" || key == "preloaded_pool") {
          if (u > 64) return fail("configuration: " + key + " is at most 64");
          (key == "warm_pool" ? c.warm_pool : c.preloaded_pool) = u;
        }
      }
    }
  } catch (const std::exception& e) {
    return fail(std::string("configuration: ") + e.what());
  }
  return c;
}

Result<ServiceConfig> load_config(const std::string& path, ServiceConfig base) {
  std::ifstream in(path);
  if (!in) return fail("cannot read the configuration file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str(), std::move(base));
}

std::string choose_image_dir(const std::string& flag, const std::string& env, const std::string& config) {
  if (!flag.empty()) return flag;
  if (!env.empty()) return env;
  return config;  // "": <state_dir>/images (service_image_dir)
}

Result<ServiceConfig> config_from_args(const std::vector<std::string>& args) {
  ServiceConfig c;
  c.data_dir = store::default_data_dir();  // $AIRLOCK_DATA_DIR, as for `airlock keys` and `verify`
  std::string image_dir_flag;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--config") {
      auto loaded = load_config(args[i + 1], c);
      if (!loaded) return loaded;
      c = *loaded;
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--node-key" || a.starts_with("--node-key="))
      return fail("the node key is never a flag (any local user reads flags in /proc): put node_key or "
                  "node_key_file in the configuration file");
    if (i + 1 >= args.size()) return fail("option " + a + " needs a value (see airlock serve --help)");
    const std::string& v = args[++i];
    if (a == "--config") continue;
    if (a == "--listen") {
      if (auto st = parse_listen(v, c); !st) return std::unexpected(st.error());
    } else if (a == "--data-dir") {
      c.data_dir = v;
    } else if (a == "--database-url") {
      if (!v.empty() && !store::is_postgres_url(v)) return fail("--database-url starts with postgresql://");
      c.database_url = v;
    } else if (a == "--state-dir") {
      c.state_dir = v;
    } else if (a == "--content-dir") {
      c.content_dir = v;
    } else if (a == "--image-dir") {
      if (v.empty()) return fail("--image-dir needs a directory");
      image_dir_flag = v;
    } else if (a == "--role") {
      auto role = parse_role(v);
      if (!role) return fail("--role: " + role_problem(v));
      c.role = *role;
    } else if (a == "--node-id") {
      c.node_id = v;
    } else if (a == "--node-address") {
      c.node_address = v;
    } else if (a == "--max-running" || a == "--max-queued" || a == "--retention-days" || a == "--warm" ||
               a == "--preloaded" || a == "--tenant-max-queued" || a == "--tenant-storage-mb" ||
               a == "--max-connections" || a == "--event-keepalive-ms") {
      auto n = positive(a, v);
      if (!n) return std::unexpected(n.error());
      if ((a == "--warm" || a == "--preloaded") && *n > 64) return fail(a + " is at most 64");
      if (a == "--tenant-storage-mb" && *n > (1ull << 40)) return fail(a + " is too large");
      if (a == "--event-keepalive-ms" && (*n < kMinKeepaliveMs || *n > kMaxKeepaliveMs)) return fail(keepalive_range());
      if (a == "--max-running") c.max_running = *n;
      else if (a == "--max-connections") c.max_connections = std::max<uint64_t>(1, *n);
      else if (a == "--max-queued") c.max_queued = *n;
      else if (a == "--tenant-max-queued") c.tenant_max_queued = *n;
      else if (a == "--tenant-storage-mb") c.tenant_storage_bytes = *n << 20;
      else if (a == "--warm") c.warm_pool = *n;
      else if (a == "--preloaded") c.preloaded_pool = *n;
      else if (a == "--event-keepalive-ms") c.event_keepalive_ms = *n;
      else c.retention_days = *n;
    } else {
      return fail("unknown option " + a + " (see airlock serve --help)");
    }
  }
  // The image store, as `airlock run` and `airlock image` choose it, and the file's key after the environment.
  const char* env_image_dir = std::getenv("AIRLOCK_IMAGE_DIR");
  c.image_dir = choose_image_dir(image_dir_flag, env_image_dir ? env_image_dir : "", c.image_dir);
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = 0;
  if (auto st = finish_cluster_config(c, host); !st) return std::unexpected(st.error());
  return c;
}

}  // namespace airlock::service
