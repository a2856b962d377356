// Network egress through real `airlock run` jobs. The upstream "test host" is
// a network namespace this test makes (veth pair, 198.18.0.0/15 benchmarking
// addresses and an fd00:a1::/32 prefix), running tests/integration/
// egress_upstream.py; names come from an --egress-hosts file. Nothing outside
// this machine is ever addressed. Every test removes what it made.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "pool_helpers.h"
#include "run_helpers.h"
#include "service_fixture.h"

using namespace airlock::testing;
using json = nlohmann::json;

namespace {

int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

// Named network namespaces, without the test hosts of concurrent egress tests.
std::string netns_list() {
  FILE* p = ::popen("ip netns list 2>/dev/null", "r");
  std::string out;
  char buf[256];
  while (p && std::fgets(buf, sizeof(buf), p))
    if (std::string_view(buf).rfind("airlock-egress-", 0) != 0) out += buf;
  if (p) ::pclose(p);
  return out;
}

// A host in a network namespace of its own, reached from the host over a
// veth pair: HTTP on 8080, 8081 and 9090, HTTPS (a test CA) on 8443.
class TestHost {
 public:
  explicit TestHost(const TempDir& dir) : dir_(dir) {
    int index = static_cast<int>(::getpid() % 32768);
    uint32_t base = (198u << 24) | (18u << 16) | static_cast<uint32_t>(index * 4);
    auto dotted = [](uint32_t a) {
      return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." + std::to_string((a >> 8) & 255) +
             "." + std::to_string(a & 255);
    };
    host_ip = dotted(base + 1);
    ip4 = dotted(base + 2);
    char hex[8];
    std::snprintf(hex, sizeof(hex), "%x", index);
    ip6 = std::string("fd00:a1:") + hex + "::2";
    ns_ = "airlock-egress-" + std::to_string(::getpid());
    veth_ = "aeg" + std::to_string(::getpid());
    bool ok = sh("ip netns add " + ns_) == 0 &&
              sh("ip link add " + veth_ + "h type veth peer name " + veth_ + "n netns " + ns_) == 0 &&
              sh("ip addr add " + host_ip + "/30 dev " + veth_ + "h") == 0 &&
              sh("ip -6 addr add fd00:a1:" + std::string(hex) + "::1/64 dev " + veth_ + "h nodad") == 0 &&
              sh("ip link set " + veth_ + "h up") == 0 &&
              sh("ip -n " + ns_ + " addr add " + ip4 + "/30 dev " + veth_ + "n") == 0 &&
              sh("ip -n " + ns_ + " -6 addr add " + ip6 + "/64 dev " + veth_ + "n nodad") == 0 &&
              sh("ip -n " + ns_ + " link set " + veth_ + "n up") == 0 && sh("ip -n " + ns_ + " link set lo up") == 0;
    EXPECT_TRUE(ok) << "could not make the test host's namespace";
    ca = dir.sub("ca.pem");
    std::string key = dir.sub("key.pem");
    EXPECT_EQ(sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "
                 "/CN=api.test -addext subjectAltName=DNS:api.test -keyout " +
                 key + " -out " + ca),
              0);
    log_ = dir.sub("upstream.log");
    std::string ready = dir.sub("upstream.ready");
    write_text(log_, "");
    server_ = ::fork();
    if (server_ == 0) {
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0);
      ::dup2(null, 1);
      std::string script = std::string(AIRLOCK_SOURCE_DIR) + "/tests/integration/egress_upstream.py";
      ::execlp("ip", "ip", "netns", "exec", ns_.c_str(), "python3", script.c_str(), "--port",
               "8080", "--port", "8081", "--port", "9090", "--bind6", "::", "--tls-port", "8443",
               "--cert", ca.c_str(), "--key", key.c_str(), "--log", log_.c_str(), "--ready",
               ready.c_str(), nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 200 && ::access(ready.c_str(), F_OK) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(::access(ready.c_str(), F_OK), 0) << "the test upstream did not start";
    hosts = dir.sub("hosts");
    write_text(hosts, ip4 + " api.test alt.test\n" + ip6 + " v6.test\n127.0.0.1 loop.test\n");
  }

  ~TestHost() {
    if (server_ > 0) {
      ::kill(server_, SIGKILL);
      ::waitpid(server_, nullptr, 0);
    }
    sh("ip netns del " + ns_);  // takes the veth pair with it
    sh("ip link del " + veth_ + "h");
  }

  // Gives the test host the IPv6 forms of a link-local IPv4 address of its
  // own (169.254.H.L, unique to this test process), and of site-local and
  // discard-only addresses, with host routes to them over the veth pair (they
  // go with it). So a gateway that connected to one of them would reach this
  // test host, nothing else. Returns name -> address, added to the hosts file.
  std::vector<std::pair<std::string, std::string>> add_special_forms() {
    int index = static_cast<int>(::getpid() % 32768);
    int h = 1 + (index >> 8), l = index & 255;
    char v4[32], hi[8], lo[16], inv[32], idx[16];
    std::snprintf(v4, sizeof(v4), "169.254.%d.%d", h, l);
    std::snprintf(hi, sizeof(hi), "a9fe");
    std::snprintf(lo, sizeof(lo), "%02x%02x", h, l);
    std::snprintf(inv, sizeof(inv), "5601:%04x", 0xffff & ~((h << 8) | l));  // Teredo: inverted
    std::snprintf(idx, sizeof(idx), "%x", index);
    link_local4 = v4;
    std::string embedded = std::string(hi) + ":" + lo;
    std::vector<std::pair<std::string, std::string>> forms = {
        {"mapped.test", "::ffff:" + link_local4},
        {"nat64.test", "64:ff9b::" + embedded},
        {"nat64-local.test", "64:ff9b:1::" + embedded},
        {"sixtofour.test", "2002:" + embedded + "::1"},
        {"compat.test", "::" + embedded},
        {"teredo.test", "2001:0:c000:201::" + std::string(inv)},
        {"site-local.test", "fec0::" + std::string(idx) + ":1"},
        {"discard.test", "100::" + std::string(idx)},
    };
    bool ok = sh("ip -n " + ns_ + " addr add " + link_local4 + "/32 dev " + veth_ + "n") == 0 &&
              sh("ip route add " + link_local4 + "/32 dev " + veth_ + "h") == 0;
    std::string lines;
    for (const auto& [name, address] : forms) {
      lines += address + " " + name + "\n";
      if (address.rfind("::ffff:", 0) == 0) continue;  // reached over IPv4
      ok = ok &&
           sh("ip -n " + ns_ + " -6 addr add " + address + "/128 dev " + veth_ + "n nodad") == 0 &&
           sh("ip -6 route add " + address + "/128 dev " + veth_ + "h") == 0;
    }
    EXPECT_TRUE(ok) << "could not give the test host its special addresses";
    write_text(hosts, read_text(hosts) + lines);
    return forms;
  }

  std::vector<json> requests() const {
    std::vector<json> out;
    std::istringstream in(read_text(log_));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(json::parse(line));
    return out;
  }
  const std::string& netns() const { return ns_; }
  const std::string& veth() const { return veth_; }

  std::string host_ip, ip4, ip6, ca, hosts, link_local4;

 private:
  const TempDir& dir_;
  std::string ns_, veth_, log_;
  pid_t server_ = -1;
};

std::string rule(const std::string& host, int port, const std::string& extra = "") {
  return "{\"host\":\"" + host + "\",\"port\":" + std::to_string(port) + ",\"allow_private\":true" + extra + "}";
}

class Egress : public ::testing::Test {
 protected:
  Egress() : host_(dir_) {}

  // airlock run --json with the test host's names, the CA admitted as /inputs/ca.pem.
  Ran run_python(const std::vector<std::string>& rules, const std::string& code,
                 const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run", "--state-dir", dir_.state(), "--json", "--timeout", "30",
                                     "--egress-hosts", host_.hosts, "--input", host_.ca};
    for (const auto& r : rules) {
      args.push_back("--allow-rule");
      args.push_back(r);
    }
    args.insert(args.end(), extra.begin(), extra.end());
    write_text(dir_.sub("code.py"), code);
    args.insert(args.end(), {"--input", dir_.sub("code.py"), "--", "python3", "/inputs/code.py"});
    return run_airlock(args);
  }

  static const json* attempt(const json& record, const std::string& host, int port, const std::string& method) {
    for (const auto& a : record["network"])
      if (a["host"] == host && a["port"] == port && a["method"] == method) return &a;
    return nullptr;
  }

  // A service whose tenant alpha may name api.test:8080 (and beta nothing).
  std::vector<std::string> service_args_with_caps(const std::string& name) {
    std::string config = dir_.sub(name);
    write_text(config, "egress_hosts = \"" + host_.hosts + "\"\n[egress_caps]\nalpha = [" +
                           "{host = \"api.test\", port = 8080, allow_private = true}]\n");
    return {"--config", config};
  }

  TempDir dir_;
  TestHost host_;
};

// Prints "NAME: <first line of the answer or the error>" for each request.
const char* kFetch = R"(
import json, ssl, sys, time, urllib.request, urllib.error
def fetch(name, url, method="GET", data=None, context=None):
    t = time.monotonic()
    try:
        r = urllib.request.urlopen(urllib.request.Request(url, method=method, data=data), timeout=10, context=context)
        print(name + ": " + str(r.status) + " " + r.read().decode()[:2000])
    except urllib.error.HTTPError as e:
        print(name + ": " + str(e.code) + " " + e.read().decode().strip())
    except Exception as e:
        print(name + ": error " + repr(e))
    print(name + " took " + str(round(time.monotonic() - t, 3)))
)";

}  // namespace

TEST_F(Egress, AllowedHostIsReachableOverHttpAndThroughConnect) {
  auto ran = run_python({rule("api.test", 8080), rule("api.test", 8443), rule("v6.test", 8081)},
                        std::string(kFetch) + R"(
fetch("plain", "http://api.test:8080/hello?x=1")
fetch("ipv6_upstream", "http://v6.test:8081/six")
ctx = ssl.create_default_context(cafile="/inputs/ca.pem")
fetch("tls", "https://api.test:8443/over-connect", context=ctx)
)");
  auto r = ran.record();
  std::string out = r["stdout"]["text"];
  EXPECT_EQ(r["outcome"], "succeeded") << ran.err << r["stderr"]["text"];
  EXPECT_NE(out.find("plain: 200 {\"port\": 8080, \"method\": \"GET\", \"path\": \"/hello?x=1\""), std::string::npos)
      << out;
  EXPECT_NE(out.find("tls: 200 {\"port\": 8443, \"method\": \"GET\", \"path\": \"/over-connect\""), std::string::npos)
      << out;
  EXPECT_NE(out.find("ipv6_upstream: 200 {\"port\": 8081, \"method\": \"GET\", \"path\": \"/six\""),
            std::string::npos)
      << out;
  const json* six = attempt(r, "v6.test", 8081, "GET");
  ASSERT_TRUE(six);
  EXPECT_EQ((*six)["address"], host_.ip6);  // the gateway connects out over IPv6 too
  const json* plain = attempt(r, "api.test", 8080, "GET");
  const json* tunnel = attempt(r, "api.test", 8443, "CONNECT");
  ASSERT_TRUE(plain && tunnel) << r["network"].dump(1);
  EXPECT_TRUE((*plain)["allowed"]);
  EXPECT_EQ((*plain)["address"], host_.ip4);
  EXPECT_GT((*plain)["bytes_down"].get<int>(), 100);
  EXPECT_TRUE((*tunnel)["allowed"]);
  EXPECT_GT((*tunnel)["bytes_up"].get<int>(), 100);  // a TLS handshake went through
  EXPECT_EQ(r["policy"]["network"], "gateway");
  EXPECT_EQ(r["policy"]["allow"].size(), 3u);
  EXPECT_TRUE(std::find(r["limits_hit"].begin(), r["limits_hit"].end(), "network") == r["limits_hit"].end());
  EXPECT_EQ(host_.requests().size(), 3u);
}

TEST_F(Egress, WhatTheRuleDoesNotNameIsRefusedWithTheReasonAndRecorded) {
  auto ran = run_python({rule("api.test", 8080, R"(,"methods":["GET"],"paths":["/v1/"])")},
                        std::string(kFetch) + R"(
fetch("ok", "http://api.test:8080/v1/items")
fetch("other_name", "http://alt.test:8080/v1/items")
fetch("other_port", "http://api.test:9090/v1/items")
fetch("method", "http://api.test:8080/v1/items", method="POST", data=b"x")
fetch("path", "http://api.test:8080/admin")
fetch("dotdot", "http://api.test:8080/v1/../admin")
fetch("encoded", "http://api.test:8080/v1/%2e%2e/admin")
fetch("ip_literal", "http://)" + host_.ip4 + R"(:8080/v1/items")
)");
  auto r = ran.record();
  std::string out = r["stdout"]["text"];
  EXPECT_NE(out.find("ok: 200 "), std::string::npos) << out;
  EXPECT_NE(out.find("other_name: 403 airlock egress: alt.test:8080 is not in the job's network policy"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("other_port: 403 airlock egress: api.test:9090 is not in the job's network policy"),
            std::string::npos);
  EXPECT_NE(out.find("method: 403 airlock egress: method POST is not allowed for api.test:8080"), std::string::npos);
  EXPECT_NE(out.find("path: 403 airlock egress: path /admin is not allowed for api.test"), std::string::npos);
  EXPECT_NE(out.find("ip_literal: 403 airlock egress: " + host_.ip4 + ":8080 is not in the job's network policy"),
            std::string::npos);
  EXPECT_NE(out.find("dotdot: 400 airlock egress: dot segments in the path are refused"), std::string::npos);
  EXPECT_NE(out.find("encoded: 400 airlock egress: encoded '.', '/', '\\' or NUL in the path are refused"),
            std::string::npos);
  auto seen = host_.requests();
  ASSERT_EQ(seen.size(), 1u) << out;
  EXPECT_EQ(seen[0]["path"], "/v1/items");
  int denied = 0;
  for (const auto& a : r["network"])
    if (!a["allowed"]) {
      ++denied;
      EXPECT_TRUE(a["status"] == 403 || a["status"] == 400) << a;
      EXPECT_FALSE(a["reason"].get<std::string>().empty());
    }
  EXPECT_EQ(denied, 7) << r["network"].dump(1);
  EXPECT_NE(std::find(r["limits_hit"].begin(), r["limits_hit"].end(), "network"), r["limits_hit"].end());
  const json* name = attempt(r, "alt.test", 8080, "GET");
  ASSERT_TRUE(name);
  EXPECT_FALSE((*name)["allowed"]);
}

TEST_F(Egress, EverythingButTheGatewayFailsAtOnce) {
  auto ran = run_python({rule("api.test", 8080)}, R"(
import errno, socket, time
def probe(name, fn):
    t = time.monotonic()
    try:
        fn()
        print(name + " ESCAPED")
    except socket.gaierror as e:
        print(name + " BLOCKED gaierror " + str(e.args[0]))
    except OSError as e:
        print(name + " BLOCKED " + errno.errorcode.get(e.errno, str(e.errno)))
    print(name + " took " + str(round(time.monotonic() - t, 3)))
def tcp(family, addr):
    def f():
        s = socket.socket(family, socket.SOCK_STREAM); s.settimeout(5); s.connect(addr)
    return f
def udp(family, addr):
    def f():
        s = socket.socket(family, socket.SOCK_DGRAM); s.sendto(b"x", addr)
    return f
def icmp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    s.sendto(b"\x08\x00\xf7\xff\x00\x00\x00\x00", (")" + host_.ip4 + R"(", 0))
probe("tcp4", tcp(socket.AF_INET, (")" + host_.ip4 + R"(", 8080)))
probe("tcp4_other_port", tcp(socket.AF_INET, (")" + host_.ip4 + R"(", 9090)))
probe("udp4", udp(socket.AF_INET, (")" + host_.ip4 + R"(", 53)))
probe("tcp6", tcp(socket.AF_INET6, (")" + host_.ip6 + R"(", 8080)))
probe("udp6", udp(socket.AF_INET6, (")" + host_.ip6 + R"(", 53)))
probe("icmp", icmp)
probe("dns", lambda: socket.getaddrinfo("api.test", 8080))
probe("dns_other", lambda: socket.getaddrinfo("alt.test", 80))
probe("host_gateway_ip", tcp(socket.AF_INET, (")" + host_.host_ip + R"(", 8080)))
)");
  auto r = ran.record();
  std::string out = r["stdout"]["text"];
  EXPECT_EQ(r["outcome"], "succeeded") << r["stderr"]["text"];
  for (const char* name : {"tcp4", "tcp4_other_port", "udp4", "tcp6", "udp6", "host_gateway_ip"})
    EXPECT_NE(out.find(std::string(name) + " BLOCKED ENETUNREACH"), std::string::npos) << name << "\n" << out;
  // Ping sockets (IPPROTO_ICMP) are not among the socket protocols the
  // seccomp filter allows, whatever ping_group_range says.
  EXPECT_NE(out.find("icmp BLOCKED EPERM"), std::string::npos) << out;
  // The sandbox's /etc/hosts knows only localhost, and no resolver is reachable.
  EXPECT_NE(out.find("dns BLOCKED gaierror"), std::string::npos) << out;
  EXPECT_NE(out.find("dns_other BLOCKED gaierror"), std::string::npos) << out;
  EXPECT_EQ(out.find("ESCAPED"), std::string::npos) << out;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    auto took = line.find(" took ");
    if (took != std::string::npos) {
      EXPECT_LT(std::stod(line.substr(took + 6)), 1.0) << line;  // fast, no hang
    }
  }
  EXPECT_TRUE(host_.requests().empty());
  EXPECT_TRUE(r["network"].empty());
}

TEST_F(Egress, ANameThatResolvesToLoopbackIsRefusedUnlessTheRuleSaysSo) {
  // loop.test is 127.0.0.1 in the hosts file: a name re-pointed at the host itself.
  auto ran = run_python({R"({"host":"loop.test","port":8470})", R"({"host":"api.test","port":8080})"},
                        std::string(kFetch) + R"(
fetch("loop", "http://loop.test:8470/")
fetch("private", "http://api.test:8080/")
)");
  auto r = ran.record();
  std::string out = r["stdout"]["text"];
  EXPECT_NE(out.find("loop: 403 airlock egress: loop.test resolved to 127.0.0.1 (loopback), which the policy does not name"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("private: 403 airlock egress: api.test resolved to " + host_.ip4 + " (reserved)"),
            std::string::npos)
      << out;
  EXPECT_TRUE(host_.requests().empty());
  const json* loop = attempt(r, "loop.test", 8470, "GET");
  ASSERT_TRUE(loop);
  EXPECT_FALSE((*loop)["allowed"]);
  EXPECT_EQ((*loop)["address"], "");  // never connected
}

TEST_F(Egress, IPv6FormsOfALinkLocalAddressAreJudgedByTheAddressInside) {
  // Each name resolves to a form of 169.254.H.L (link-local, like the cloud
  // metadata address) or to a site-local or discard-only address, all of them
  // routed to the test host: a gateway that let one through would reach it.
  auto forms = host_.add_special_forms();
  std::vector<std::string> rules;
  std::string code = kFetch;
  for (const auto& [name, address] : forms) {
    rules.push_back("{\"host\":\"" + name + "\",\"port\":8080}");  // no allow_private
    code += "fetch(\"" + name + "\", \"http://" + name + ":8080/metadata\")\n";
  }
  code += "fetch(\"control\", \"http://api.test:8080/control\")\n";
  rules.push_back(rule("api.test", 8080));
  auto ran = run_python(rules, code);
  auto r = ran.record();
  std::string out = r["stdout"]["text"];
  EXPECT_EQ(r["outcome"], "succeeded") << ran.err << r["stderr"]["text"];
  EXPECT_NE(out.find("control: 200 "), std::string::npos)
      << out;  // the routes and the upstream work
  auto expect_refused = [&](const std::string& name, const std::string& cls,
                            const std::string& detail) {
    std::string address;
    for (const auto& [n, a] : forms)
      if (n == name) address = a;
    std::string want = name + ": 403 airlock egress: " + name + " resolved to " + address + " (" +
                       cls + "), which the policy does not name";
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
    EXPECT_NE(out.find(detail), std::string::npos) << detail << "\n" << out;
    const json* a = attempt(r, name, 8080, "GET");
    ASSERT_TRUE(a) << name;
    EXPECT_FALSE((*a)["allowed"]);
    EXPECT_EQ((*a)["status"], 403);
    EXPECT_EQ((*a)["address"], "");  // never connected
  };
  const std::string& inner = host_.link_local4;
  expect_refused("mapped.test", "link-local", "IPv4-mapped (::ffff:0:0/96) form of " + inner);
  expect_refused("nat64.test", "link-local", "NAT64 (64:ff9b::/96) form of " + inner);
  expect_refused("nat64-local.test", "private", "local-use NAT64");
  expect_refused("sixtofour.test", "link-local", "6to4 (2002::/16) form of " + inner);
  expect_refused("compat.test", "link-local", "IPv4-compatible (::/96) form of " + inner);
  expect_refused("teredo.test", "link-local", "Teredo (2001::/32) form of " + inner);
  expect_refused("site-local.test", "private", "fec0::/10");
  expect_refused("discard.test", "reserved", "100::/64");
  auto seen = host_.requests();
  ASSERT_EQ(seen.size(), 1u) << out;  // only the control request arrived
  EXPECT_EQ(seen[0]["path"], "/control");
}

TEST_F(Egress, ACredentialIsAddedOnTheWireAndNeverSeenInside) {
  std::string secret = "Bearer sk-egress-" + std::to_string(::getpid()) + "-c0ffee";
  std::string secrets = dir_.sub("secrets.toml");
  write_text(secrets, "[api]\nvalue = \"" + secret + "\"\n");
  ::chmod(secrets.c_str(), 0600);
  auto ran = run_python({rule("api.test", 8443, R"(,"tls":true,"secret":"api")")}, std::string(kFetch) + R"(
import os
fetch("via_gateway_tls", "http://api.test:8443/echo")
fetch("connect_refused", "https://api.test:8443/echo", context=ssl.create_default_context(cafile="/inputs/ca.pem"))
print("ENV", sorted(os.environ.items()))
print("ENVIRON", open("/proc/self/environ", "rb").read())
print("CMDLINE", open("/proc/self/cmdline", "rb").read())
for top in ["/inputs", "/workspace", "/tmp", "/etc", "/output", "/dev/shm"]:
    for d, _, files in os.walk(top):
        for f in files:
            try:
                data = open(os.path.join(d, f), "rb").read(1 << 20)
            except OSError:
                continue
            if b"sk-" + b"egress" in data:  # (split: this file itself is in /inputs)
                print("FOUND in", os.path.join(d, f))
)",
                        {"--secrets-file", secrets, "--egress-ca", host_.ca});
  std::string text = ran.out + ran.err;
  auto r = ran.record();
  std::string out = r["stdout"]["text"];
  EXPECT_NE(out.find("via_gateway_tls: 200 {\"port\": 8443"), std::string::npos) << out;
  // (urllib shows only the status of a refused tunnel; the reason is in the record)
  EXPECT_NE(out.find("connect_refused: error URLError(OSError('Tunnel connection failed: 403 Forbidden'))"),
            std::string::npos)
      << out;
  const json* refused = attempt(r, "api.test", 8443, "CONNECT");
  ASSERT_TRUE(refused);
  EXPECT_NE((*refused)["reason"].get<std::string>().find("must see each request"), std::string::npos);
  EXPECT_EQ(out.find("FOUND"), std::string::npos) << out;
  // On the wire: the upstream (over verified TLS) got the credential.
  auto seen = host_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["headers"]["Authorization"], secret);
  // Inside and in the record: never (the echoed header came back scrubbed).
  EXPECT_EQ(text.find("sk-egress"), std::string::npos) << text.substr(text.find("sk-egress") - 300, 400);
  EXPECT_EQ(read_text(dir_.state() + "/records/" + r["id"].get<std::string>() + ".json").find("sk-egress"),
            std::string::npos);
  const json* a = attempt(r, "api.test", 8443, "GET");
  ASSERT_TRUE(a);
  EXPECT_EQ((*a)["secret"], "api");
  EXPECT_EQ(r["policy"]["allow"][0]["secret"], "api");
}

TEST_F(Egress, AnUpstreamWhoseCertificateDoesNotVerifyGetsNothing) {
  // The upstream's certificate names api.test and is signed by the test's CA.
  // Without that CA the gateway must not trust it; with it, a name the
  // certificate does not carry (alt.test, the same address) must not pass.
  std::string secret = "Bearer sk-tls-" + std::to_string(::getpid());
  std::string secrets = dir_.sub("secrets.toml");
  write_text(secrets, "[api]\nvalue = \"" + secret + "\"\n");
  ::chmod(secrets.c_str(), 0600);
  auto unknown_ca =
      run_python({rule("api.test", 8443, R"(,"tls":true,"secret":"api")")},
                 std::string(kFetch) + "fetch(\"unknown_ca\", \"http://api.test:8443/echo\")\n",
                 {"--secrets-file", secrets});
  auto wrong_name =
      run_python({rule("alt.test", 8443, R"(,"tls":true,"secret":"api")")},
                 std::string(kFetch) + "fetch(\"wrong_name\", \"http://alt.test:8443/echo\")\n",
                 {"--secrets-file", secrets, "--egress-ca", host_.ca});
  for (auto* ran : {&unknown_ca, &wrong_name}) {
    auto r = ran->record();
    std::string out = r["stdout"]["text"];
    EXPECT_NE(out.find(": 502 airlock egress: TLS handshake: certificate verification failed: "),
              std::string::npos)
        << out << ran->err;
    const json* a = attempt(r, ran == &unknown_ca ? "api.test" : "alt.test", 8443, "GET");
    ASSERT_TRUE(a) << r["network"].dump();
    EXPECT_FALSE((*a)["allowed"].get<bool>()) << a->dump();
    EXPECT_NE((*a)["reason"].get<std::string>().find("certificate verification failed"),
              std::string::npos)
        << a->dump();
  }
  // The test's certificate is its own CA: self-signed.
  EXPECT_NE(
      unknown_ca.record()["stdout"]["text"].get<std::string>().find("self-signed certificate"),
      std::string::npos)
      << unknown_ca.record()["stdout"]["text"];
  EXPECT_NE(wrong_name.record()["stdout"]["text"].get<std::string>().find("hostname mismatch"),
            std::string::npos);
  // Not one request, so not the credential, reached the upstream.
  EXPECT_TRUE(host_.requests().empty()) << host_.requests().size();
}

TEST_F(Egress, AnEchoedCredentialNeverReachesTheCodeInChunksAsATokenOrInHeaders) {
  std::string token = "sk-egress-" + std::to_string(::getpid()) + "-c0ffee-9f8e7d";
  std::string secret = "Bearer " + token;
  std::string secrets = dir_.sub("secrets.toml");
  write_text(secrets, "[api]\nvalue = \"" + secret + "\"\n");
  ::chmod(secrets.c_str(), 0600);
  // Over TLS (the gateway speaks it) and over plain HTTP: the upstream echoes
  // the header split across two chunks at every offset, in one-byte chunks,
  // as the bare token in the body and in headers, and gzip-compressed.
  auto ran = run_python({rule("api.test", 8443, R"(,"tls":true,"secret":"api")"),
                         rule("api.test", 8080, R"(,"secret":"api")")},
                        R"(
import urllib.request, urllib.error
def get(url):
    try:
        r = urllib.request.urlopen(url, timeout=10)
        return str(r.status) + " " + "".join(k + "=" + v + ";" for k, v in r.getheaders()) + " " + r.read().decode()
    except urllib.error.HTTPError as e:
        return str(e.code) + " " + e.read().decode().strip()
    except Exception as e:
        return "error " + repr(e)
for base in ["http://api.test:8443", "http://api.test:8080"]:
    for k in range()" + std::to_string(secret.size() + 1) +
                            R"():
        print("split", k, get(base + "/echo-split/%d" % k))
    print("bytewise", get(base + "/echo-chunked/1"))
    print("token", get(base + "/echo-token"))
    print("gzip", get(base + "/echo-gzip"))
)",
                        {"--secrets-file", secrets, "--egress-ca", host_.ca});
  auto r = ran.record();
  std::string out = r["stdout"]["text"];
  EXPECT_EQ(r["outcome"], "succeeded") << r["stderr"]["text"];
  std::string everything =
      out + ran.err + read_text(dir_.state() + "/records/" + r["id"].get<std::string>() + ".json");
  for (size_t at = 0; at + 8 <= token.size(); ++at)
    EXPECT_EQ(everything.find(token.substr(at, 8)), std::string::npos)
        << "a piece of the token: " << token.substr(at, 8);
  // Every echo came back (scrubbed), and the gzip echo was refused with the reason.
  std::string starred(secret.size(), '*');
  int splits = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("split ", 0) == 0) {
      ++splits;
      EXPECT_NE(line.find(" 200 "), std::string::npos) << line;
      EXPECT_NE(line.find("\"Authorization\": \"" + starred + "\""), std::string::npos) << line;
      EXPECT_EQ(line.find("X-Trailer"), std::string::npos) << line;  // trailers are dropped
    } else if (line.rfind("bytewise ", 0) == 0) {
      EXPECT_NE(line.find("\"Authorization\": \"" + starred + "\""), std::string::npos) << line;
    } else if (line.rfind("token ", 0) == 0) {
      std::string bare(token.size(), '*');
      EXPECT_NE(line.find("X-Echo-Token=" + bare + ";"), std::string::npos) << line;
      EXPECT_NE(line.find("X-Echo-Value=" + starred + ";"), std::string::npos) << line;
      EXPECT_NE(line.find("token=" + bare), std::string::npos) << line;
    } else if (line.rfind("gzip ", 0) == 0) {
      EXPECT_NE(
          line.find("gzip 502 airlock egress: the upstream sent a body with Content-Encoding gzip"),
          std::string::npos)
          << line;
    }
  }
  EXPECT_EQ(splits, 2 * static_cast<int>(secret.size() + 1)) << out;
  // On the wire the upstream did get the credential, each time.
  auto seen = host_.requests();
  ASSERT_EQ(seen.size(), 2 * (secret.size() + 1) + 6);
  for (const auto& q : seen) EXPECT_EQ(q["headers"]["Authorization"], secret);
}

TEST_F(Egress, SecretsFileMustBeRootOnlyAndTheSecretMustExist) {
  std::string secrets = dir_.sub("secrets.toml");
  write_text(secrets, "[api]\nvalue = \"Bearer x\"\n");
  ::chmod(secrets.c_str(), 0644);
  auto loose = run_python({rule("api.test", 8080, R"(,"secret":"api")")}, "print('started')\n",
                          {"--secrets-file", secrets});
  EXPECT_EQ(loose.record()["outcome"], "sandbox_error");
  EXPECT_NE(loose.record()["reason"].get<std::string>().find("mode 0600"), std::string::npos);
  ::chmod(secrets.c_str(), 0600);
  auto missing = run_python({rule("api.test", 8080, R"(,"secret":"nope")")}, "print('started')\n",
                            {"--secrets-file", secrets});
  EXPECT_EQ(missing.record()["outcome"], "input_rejected");
  EXPECT_NE(missing.record()["reason"].get<std::string>().find("'nope'"), std::string::npos);
  EXPECT_EQ(missing.record()["stdout"]["text"], "");
}

TEST_F(Egress, ConcurrentJobsDoNotShareAllowances) {
  std::string code = std::string(kFetch) + R"(
import time
for i in range(3):
    fetch("api", "http://api.test:8080/")
    fetch("alt", "http://alt.test:8081/")
    time.sleep(0.2)
)";
  write_text(dir_.sub("both.py"), code);
  auto spawn = [&](const std::string& name, const std::string& allow) {
    std::string dir = dir_.sub(name);
    ::mkdir(dir.c_str(), 0755);
    return std::make_unique<Spawned>(
        std::vector<std::string>{"run", "--state-dir", dir_.state(), "--json", "--egress-hosts", host_.hosts,
                                 "--allow-rule", allow, "--input", dir_.sub("both.py"), "--", "python3",
                                 "/inputs/both.py"},
        dir, dir_.state());
  };
  auto a = spawn("a", rule("api.test", 8080));
  auto b = spawn("b", rule("alt.test", 8081));
  EXPECT_EQ(a->wait(), 0);
  EXPECT_EQ(b->wait(), 0);
  auto ra = json::parse(read_text(dir_.sub("a/airlock.out")));
  auto rb = json::parse(read_text(dir_.sub("b/airlock.out")));
  std::string oa = ra["stdout"]["text"], ob = rb["stdout"]["text"];
  EXPECT_NE(oa.find("api: 200"), std::string::npos) << oa;
  EXPECT_NE(oa.find("alt: 403 airlock egress: alt.test:8081 is not in the job's network policy"), std::string::npos);
  EXPECT_NE(ob.find("alt: 200"), std::string::npos) << ob;
  EXPECT_NE(ob.find("api: 403 airlock egress: api.test:8080 is not in the job's network policy"), std::string::npos);
  int on_8080 = 0, on_8081 = 0;
  for (const auto& q : host_.requests()) (q["port"] == 8080 ? on_8080 : on_8081)++;
  EXPECT_EQ(on_8080, 3);
  EXPECT_EQ(on_8081, 3);
  // The two jobs overlapped in time.
  EXPECT_LT(ra["started_at"].get<std::string>(), rb["finished_at"].get<std::string>());
  EXPECT_LT(rb["started_at"].get<std::string>(), ra["finished_at"].get<std::string>());
}

TEST_F(Egress, NothingIsLeftAfterTheJob) {
  std::string before = netns_list();
  auto ran = run_python({rule("api.test", 8080)}, std::string(kFetch) + R"(
import socket, threading
fetch("a", "http://api.test:8080/")
# A tunnel left open and a half-sent request: the gateway must end both.
s = socket.create_connection(("127.0.0.1", 980)); s.sendall(b"CONNECT api.test:8080 HTTP/1.1\r\n\r\n"); s.recv(100)
t = socket.create_connection(("127.0.0.1", 980)); t.sendall(b"GET http://api.test:8080/ HTTP/1.1\r\n")
import subprocess; subprocess.Popen(["sleep", "30"], start_new_session=True)
)");
  auto r = ran.record();
  EXPECT_EQ(r["outcome"], "succeeded") << r["stderr"]["text"];
  EXPECT_LT(r["usage"]["wall_ms"].get<int>(), 5000);
  EXPECT_TRUE(r["cleanup"]["ok"]);
  auto removed = r["cleanup"]["removed"];
  EXPECT_NE(std::find(removed.begin(), removed.end(), "gateway"), removed.end());
  EXPECT_EQ(netns_list(), before);  // airlock made no named namespace
  EXPECT_TRUE(no_processes_of_uid(r["sandbox"]["host_uid"].get<uid_t>(), 2000));
  EXPECT_TRUE(cgroups_named(r["id"]).empty());
  // The airlock process (and so every gateway thread and socket) is gone;
  // no socket of the host listens on the gateway's port.
  EXPECT_EQ(sh("ss -Hltn 'sport = :980' | grep -q ."), 256);
}

TEST(EgressCli, OptionErrorsAreOneLine) {
  for (auto bad : std::vector<std::vector<std::string>>{{"run", "--allow", "nohost", "--", "true"},
                                                       {"run", "--allow", "a.com:99999", "--", "true"},
                                                       {"run", "--allow-rule", "{\"host\":1}", "--", "true"},
                                                       {"run", "--allow-rule", "not json", "--", "true"}}) {
    auto ran = run_airlock(bad);
    EXPECT_EQ(ran.status, 125);
    EXPECT_EQ(ran.err.rfind("airlock: --allow", 0), 0u) << ran.err;
  }
}

TEST_F(Egress, TheApiTakesDestinationsWithinTheTenantsCaps) {
  ServiceProcess service(service_args_with_caps("serve.toml"));
  auto client = service.client();
  json body = {{"code", "import urllib.request\nprint(urllib.request.urlopen('http://api.test:8080/api').status)\n"},
               {"policy", {{"allow", {{{"host", "api.test"}, {"port", 8080}, {"allow_private", true}}}}}}};
  auto job = run_job(client, service.alpha, body);
  EXPECT_EQ(job["outcome"], "succeeded") << job.dump(1);
  auto view = client.request("GET", "/v1/jobs/" + job["id"].get<std::string>(), "", service.alpha.auth());
  ASSERT_EQ(view.status, 200) << view.body;
  auto r = view.json().contains("record") ? view.json()["record"] : view.json();
  ASSERT_EQ(r["network"].size(), 1u) << r.dump(1);
  EXPECT_TRUE(r["network"][0]["allowed"]);
  EXPECT_EQ(r["policy"]["allow"][0]["host"], "api.test");
  ASSERT_EQ(host_.requests().size(), 1u);
  EXPECT_EQ(host_.requests()[0]["path"], "/api");
  // Tenant beta has no caps: the same request is refused before anything runs.
  auto refused = client.request("POST", "/v1/jobs", body.dump(), service.beta.auth());
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("not in the tenant's allowed destinations"), std::string::npos) << refused.body;
}

TEST_F(Egress, ASessionReachesOnlyWhatItNamedForItsWholeLife) {
  ServiceProcess service(service_args_with_caps("serve-sessions.toml"));
  auto client = service.client();
  json body = {{"policy", {{"allow", {{{"host", "api.test"}, {"port", 8080}, {"allow_private", true}}}}}}};
  auto created = client.request("POST", "/v1/sessions", body.dump(), service.alpha.auth());
  ASSERT_EQ(created.status, 201) << created.body;
  std::string sid = created.json()["id"];
  auto call = [&](const std::string& code) {
    auto r = client.request("POST", "/v1/sessions/" + sid + "/execs", json{{"code", code}, {"wait_s", 30}}.dump(),
                            service.alpha.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.json();
  };
  // Turn 1 and a later turn both reach the named destination through the gateway.
  json first = call("import urllib.request\nurllib.request.urlopen('http://api.test:8080/one').status");
  EXPECT_EQ(first["result"]["value"], "200") << first.dump(1);
  json other = call("try:\n    urllib.request.urlopen('http://api.test:8081/other')\nexcept Exception as e:\n    print(e)");
  EXPECT_NE(other["result"]["stdout"].get<std::string>().find("403"), std::string::npos) << other.dump(1);
  json direct = call("import socket\ntry:\n    socket.create_connection(('" + host_.ip4 +
                     "', 8080), timeout=2)\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)");
  EXPECT_EQ(direct["result"]["stdout"].get<std::string>().rfind("refused", 0), 0u) << direct.dump(1);
  json second = call("urllib.request.urlopen('http://api.test:8080/two').status");
  EXPECT_EQ(second["result"]["value"], "200");
  ASSERT_EQ(host_.requests().size(), 2u);
  EXPECT_EQ(host_.requests()[1]["path"], "/two");

  // The record lists every attempt, allowed or not.
  auto closed = client.request("DELETE", "/v1/sessions/" + sid, "", service.alpha.auth());
  ASSERT_EQ(closed.status, 200) << closed.body;
  const json record = closed.json()["record"];
  json network;
  for (const auto& e : record["events"])
    if (e["event"] == "network") network = e["attempts"];
  ASSERT_EQ(network.size(), 3u) << closed.body;
  EXPECT_TRUE(network[0]["allowed"]);
  EXPECT_FALSE(network[1]["allowed"]);
  EXPECT_EQ(record["request"]["policy"]["allow"][0]["host"], "api.test");
  // A tenant without the destination in its caps cannot open such a session.
  auto refused = client.request("POST", "/v1/sessions", body.dump(), service.beta.auth());
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("not in the tenant's allowed destinations"), std::string::npos) << refused.body;
}

TEST_F(Egress, PreparedSandboxesFromTheWarmPoolGetTheGatewayToo) {
  ::mkdir(dir_.state().c_str(), 0711);
  TestPool pool(dir_.path(), dir_.state(), 1, 1);
  ASSERT_TRUE(pool.ready()) << pool.log();
  for (std::string mode : {"warm", "preloaded"}) {
    auto ran = run_python({rule("api.test", 8080)}, std::string(kFetch) + R"(
fetch("allowed", "http://api.test:8080/)" + mode + R"(")
fetch("other", "http://alt.test:8080/")
)",
                          {"--start", mode});
    auto r = ran.record();
    std::string out = r["stdout"]["text"];
    EXPECT_EQ(r["sandbox"]["start"], mode) << r.dump().substr(0, 2000);
    EXPECT_NE(out.find("allowed: 200 "), std::string::npos) << out;
    EXPECT_NE(out.find("other: 403 airlock egress: alt.test:8080 is not in the job's network policy"),
              std::string::npos)
        << out;
    EXPECT_EQ(r["network"].size(), 2u);
  }
  EXPECT_EQ(host_.requests().size(), 2u);
  EXPECT_EQ(pool.stop(), 0);
}
