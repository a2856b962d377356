#include "egress/address.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace airlock::egress {
namespace {

using C = AddressClass;

// How an IPv6 range carries an IPv4 address.
enum class Form {
  kNone,
  kLast32,     // the last 32 bits (mapped, translated, compatible, NAT64 /96)
  kSixToFour,  // bits 16..47 (RFC 3056)
  kTeredo,     // the last 32 bits, inverted: the client's address (RFC 4380)
};

struct Range {
  const char* prefix;
  AddressClass cls;  // for a form: unused, the address inside decides
  const char* name;
  Form form = Form::kNone;
};

// First match wins, so a range comes before any range that contains it.
// From the IANA IPv4 Special-Purpose Address Registry. 192.0.0.0/24 is
// reserved as a whole, although two of its /32s (PCP and TURN anycast) are
// globally reachable: nothing a job needs lives there. 192.31.196.0/24,
// 192.52.193.0/24 and 192.175.48.0/24 (AS112, AMT) are globally reachable
// and stay public.
constexpr Range kIPv4[] = {
    {"0.0.0.0/8", C::kUnspecified, "\"this network\""},
    {"10.0.0.0/8", C::kPrivate, "private-use"},
    {"100.64.0.0/10", C::kPrivate, "shared address space"},
    {"127.0.0.0/8", C::kLoopback, "loopback"},
    {"169.254.0.0/16", C::kLinkLocal, "link-local"},
    {"172.16.0.0/12", C::kPrivate, "private-use"},
    {"192.0.0.0/24", C::kReserved, "IETF protocol assignments"},
    {"192.0.2.0/24", C::kReserved, "documentation, TEST-NET-1"},
    {"192.88.99.0/24", C::kReserved, "6to4 relay anycast, deprecated"},
    {"192.168.0.0/16", C::kPrivate, "private-use"},
    {"198.18.0.0/15", C::kReserved, "benchmarking"},
    {"198.51.100.0/24", C::kReserved, "documentation, TEST-NET-2"},
    {"203.0.113.0/24", C::kReserved, "documentation, TEST-NET-3"},
    {"224.0.0.0/4", C::kMulticast, "multicast"},
    {"255.255.255.255/32", C::kBroadcast, "limited broadcast"},
    {"240.0.0.0/4", C::kReserved, "reserved"},
    {"0.0.0.0/0", C::kPublic, "public"},
};

// From the IANA IPv6 Special-Purpose Address Registry, plus the ranges of
// the addressing architecture (RFC 4291: multicast, link-local, the
// deprecated site-local) and the rule that only 2000::/3 is global unicast.
constexpr Range kIPv6[] = {
    {"::/128", C::kUnspecified, "unspecified"},
    {"::1/128", C::kLoopback, "loopback"},
    {"::ffff:0:0/96", C::kPublic, "IPv4-mapped", Form::kLast32},
    {"::ffff:0:0:0/96", C::kPublic, "IPv4-translated", Form::kLast32},
    {"::/96", C::kPublic, "IPv4-compatible", Form::kLast32},
    {"64:ff9b::/96", C::kPublic, "NAT64", Form::kLast32},
    // Where the IPv4 address sits depends on the prefix length the operator
    // chose (RFC 6052); the range is not globally reachable in any case.
    {"64:ff9b:1::/48", C::kPrivate, "local-use NAT64"},
    {"100::/64", C::kReserved, "discard-only"},
    {"100:0:0:1::/64", C::kReserved, "dummy prefix"},
    {"2001::/32", C::kPublic, "Teredo", Form::kTeredo},
    {"2001:1::1/128", C::kPublic, "PCP anycast"},
    {"2001:1::2/128", C::kPublic, "TURN anycast"},
    {"2001:1::3/128", C::kPublic, "DNS-SD SRP anycast"},
    {"2001:2::/48", C::kReserved, "benchmarking"},
    {"2001:3::/32", C::kPublic, "AMT"},
    {"2001:4:112::/48", C::kPublic, "AS112-v6"},
    {"2001:10::/28", C::kReserved, "ORCHID, deprecated"},
    {"2001:20::/28", C::kReserved, "ORCHIDv2: identifiers, not locators"},
    {"2001:30::/28", C::kPublic, "drone remote ID"},
    {"2001::/23", C::kReserved, "IETF protocol assignments"},
    {"2001:db8::/32", C::kReserved, "documentation"},
    {"2002::/16", C::kPublic, "6to4", Form::kSixToFour},
    {"3fff::/20", C::kReserved, "documentation"},
    {"5f00::/16", C::kReserved, "SRv6 SIDs"},
    {"fc00::/7", C::kPrivate, "unique local"},
    {"fe80::/10", C::kLinkLocal, "link-local"},
    {"fec0::/10", C::kPrivate, "site-local, deprecated"},
    {"ff00::/8", C::kMulticast, "multicast"},
    {"2000::/3", C::kPublic, "global unicast"},
    {"::/0", C::kReserved, "reserved by the IETF, outside global unicast 2000::/3"},
};

struct Prefix {
  std::array<uint8_t, 16> bytes{};
  int bits = 0;
  const Range* range = nullptr;
};

// The tables are code: a prefix that does not parse is a bug, not input.
std::vector<Prefix> parse_table(const Range* begin, const Range* end, int family) {
  std::vector<Prefix> out;
  for (const Range* r = begin; r != end; ++r) {
    std::string text(r->prefix);
    auto slash = text.find('/');
    if (slash == std::string::npos) std::abort();
    Prefix p;
    p.range = r;
    p.bits = std::atoi(text.c_str() + slash + 1);
    if (::inet_pton(family, text.substr(0, slash).c_str(), p.bytes.data()) != 1) std::abort();
    out.push_back(p);
  }
  return out;
}

bool in_prefix(const uint8_t* a, const Prefix& p) {
  int full = p.bits / 8, rest = p.bits % 8;
  for (int i = 0; i < full; ++i)
    if (a[i] != p.bytes[i]) return false;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (a[full] & mask) == (p.bytes[full] & mask);
}

const Range& lookup(const std::vector<Prefix>& table, const uint8_t* a) {
  for (const auto& p : table)
    if (in_prefix(a, p)) return *p.range;
  std::abort();  // every table ends with a /0
}

std::string in_range(const Range& r) { return "in " + std::string(r.prefix) + " (" + r.name + ")"; }

std::string ipv4_text(const uint8_t* a) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, a, text, sizeof(text));
  return text;
}

AddressInfo describe_v4(const uint8_t* a) {
  static const std::vector<Prefix> table = parse_table(std::begin(kIPv4), std::end(kIPv4), AF_INET);
  const Range& r = lookup(table, a);
  return {r.cls, in_range(r)};
}

// The IPv4 address inside decides; the detail names the form.
AddressInfo judged_inside(const uint8_t* v4, std::string_view form, std::string_view prefix) {
  AddressInfo inner = describe_v4(v4);
  return {inner.cls, "the " + std::string(form) + " (" + std::string(prefix) + ") form of " +
                         ipv4_text(v4) + ", " + inner.detail};
}

AddressInfo describe_v6(const uint8_t* a) {
  static const std::vector<Prefix> table =
      parse_table(std::begin(kIPv6), std::end(kIPv6), AF_INET6);
  const Range& r = lookup(table, a);
  switch (r.form) {
    case Form::kLast32:
      return judged_inside(a + 12, r.name, r.prefix);
    case Form::kSixToFour:
      return judged_inside(a + 2, r.name, r.prefix);
    case Form::kTeredo: {
      uint8_t client[4] = {static_cast<uint8_t>(~a[12]), static_cast<uint8_t>(~a[13]),
                           static_cast<uint8_t>(~a[14]), static_cast<uint8_t>(~a[15])};
      return judged_inside(client, r.name, r.prefix);
    }
    case Form::kNone:
      break;
  }
  // ISATAP (RFC 5214): any /64 prefix with the interface identifier
  // 0:5efe:a.b.c.d (or 200:5efe:...) reaches a.b.c.d through the site's
  // IPv4 network. Judged by a.b.c.d when that is not public.
  bool isatap = (a[8] == 0x00 || a[8] == 0x02) && a[9] == 0x00 && a[10] == 0x5e && a[11] == 0xfe;
  if (r.cls == C::kPublic && isatap) {
    AddressInfo inner = judged_inside(a + 12, "ISATAP", "interface identifier [02]00:5efe");
    if (inner.cls != C::kPublic) return inner;
  }
  return {r.cls, in_range(r)};
}

}  // namespace

std::string_view class_name(AddressClass c) {
  switch (c) {
    case C::kPublic:
      return "public";
    case C::kLoopback:
      return "loopback";
    case C::kPrivate:
      return "private";
    case C::kLinkLocal:
      return "link-local";
    case C::kReserved:
      return "reserved";
    case C::kUnspecified:
      return "unspecified";
    case C::kMulticast:
      return "multicast";
    case C::kBroadcast:
      return "broadcast";
  }
  return "reserved";
}

Result<AddressInfo> describe_address(std::string_view ip_text) {
  std::string ip(ip_text);
  uint8_t bytes[16] = {};
  if (ip.find('\0') != std::string::npos) return fail("an IP address with a NUL byte");
  if (::inet_pton(AF_INET, ip.c_str(), bytes) == 1) return describe_v4(bytes);
  if (::inet_pton(AF_INET6, ip.c_str(), bytes) == 1) return describe_v6(bytes);
  return fail("'" + ip + "' is not an IP address");
}

Result<AddressClass> classify_address(std::string_view ip) {
  auto info = describe_address(ip);
  if (!info) return std::unexpected(info.error());
  return info->cls;
}

}  // namespace airlock::egress
