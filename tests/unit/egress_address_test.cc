// Address classification (egress/address.h): every special-purpose range of
// both families at its edges, and every IPv6 form of an IPv4 address judged
// by the address inside. The expected ranges are written out here again, not
// taken from the code's table.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "egress/address.h"
#include "egress/policy.h"

using namespace airlock::egress;
using C = AddressClass;

namespace {

struct Bytes {
  std::array<uint8_t, 16> b{};
  int size = 4;  // 4 or 16
};

Bytes parse(const std::string& text, int family) {
  Bytes out;
  out.size = family == AF_INET ? 4 : 16;
  EXPECT_EQ(::inet_pton(family, text.c_str(), out.b.data()), 1) << text;
  return out;
}

std::string text(const Bytes& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(a.size == 4 ? AF_INET : AF_INET6, a.b.data(), buf, sizeof(buf));
  return buf;
}

// The first or the last address of PREFIX/BITS.
Bytes edge(Bytes a, int bits, bool last) {
  for (int i = 0; i < a.size * 8; ++i) {
    if (i < bits) continue;
    uint8_t bit = static_cast<uint8_t>(0x80 >> (i % 8));
    a.b[i / 8] = last ? (a.b[i / 8] | bit) : (a.b[i / 8] & ~bit);
  }
  return a;
}

// a + 1 or a - 1; false when it would wrap.
bool step(Bytes& a, int delta) {
  for (int i = a.size - 1; i >= 0; --i) {
    if (delta > 0 && a.b[i]++ != 0xff) return true;
    if (delta < 0 && a.b[i]-- != 0x00) return true;
  }
  return false;
}

struct RangeCase {
  const char* prefix;
  C cls;
};

// IANA IPv4 Special-Purpose Address Registry (and multicast, 240/4, broadcast).
const std::vector<RangeCase> kIPv4Ranges = {
    {"0.0.0.0/8", C::kUnspecified},    {"10.0.0.0/8", C::kPrivate},
    {"100.64.0.0/10", C::kPrivate},    {"127.0.0.0/8", C::kLoopback},
    {"169.254.0.0/16", C::kLinkLocal}, {"172.16.0.0/12", C::kPrivate},
    {"192.0.0.0/24", C::kReserved},    {"192.0.2.0/24", C::kReserved},
    {"192.88.99.0/24", C::kReserved},  {"192.168.0.0/16", C::kPrivate},
    {"198.18.0.0/15", C::kReserved},   {"198.51.100.0/24", C::kReserved},
    {"203.0.113.0/24", C::kReserved},  {"224.0.0.0/4", C::kMulticast},
    {"240.0.0.0/4", C::kReserved},     {"255.255.255.255/32", C::kBroadcast},
};

// IANA IPv6 Special-Purpose Address Registry and RFC 4291 (forms apart, below).
const std::vector<RangeCase> kIPv6Ranges = {
    {"::/128", C::kUnspecified},      {"::1/128", C::kLoopback},
    {"64:ff9b:1::/48", C::kPrivate},  {"100::/64", C::kReserved},
    {"100:0:0:1::/64", C::kReserved}, {"2001:1::1/128", C::kPublic},
    {"2001:1::2/128", C::kPublic},    {"2001:1::3/128", C::kPublic},
    {"2001:2::/48", C::kReserved},    {"2001:3::/32", C::kPublic},
    {"2001:4:112::/48", C::kPublic},  {"2001:10::/28", C::kReserved},
    {"2001:20::/28", C::kReserved},   {"2001:30::/28", C::kPublic},
    {"2001:db8::/32", C::kReserved},  {"3fff::/20", C::kReserved},
    {"5f00::/16", C::kReserved},      {"fc00::/7", C::kPrivate},
    {"fe80::/10", C::kLinkLocal},     {"fec0::/10", C::kPrivate},
    {"ff00::/8", C::kMulticast},
};

AddressInfo info_of(const std::string& ip) {
  auto got = describe_address(ip);
  EXPECT_TRUE(got) << ip;
  return got ? *got : AddressInfo{};
}

void expect_range_edges(const RangeCase& r, int family) {
  std::string prefix(r.prefix);
  auto slash = prefix.find('/');
  int bits = std::stoi(prefix.substr(slash + 1));
  Bytes base = parse(prefix.substr(0, slash), family);
  Bytes first = edge(base, bits, false), last = edge(base, bits, true);
  if (prefix == "240.0.0.0/4") last.b[3] = 254;  // 255.255.255.255 is broadcast, its own range
  for (const Bytes& a : {first, last}) {
    AddressInfo got = info_of(text(a));
    EXPECT_EQ(got.cls, r.cls) << text(a) << " in " << r.prefix << " is " << class_name(got.cls);
    if (r.cls != C::kPublic) {
      EXPECT_NE(got.detail.find(std::string("in ") + r.prefix), std::string::npos)
          << text(a) << ": " << got.detail;
    }
  }
  // Just outside: another range decides (the detail names another prefix).
  Bytes before = first, after = last;
  if (step(before, -1)) {
    AddressInfo got = info_of(text(before));
    EXPECT_EQ(got.detail.find(std::string("in ") + r.prefix + " "), std::string::npos)
        << text(before) << " " << got.detail;
  }
  if (step(after, +1)) {
    AddressInfo got = info_of(text(after));
    EXPECT_EQ(got.detail.find(std::string("in ") + r.prefix + " "), std::string::npos)
        << text(after) << " " << got.detail;
  }
}

}  // namespace

TEST(EgressAddress, EveryIPv4SpecialRangeAtItsEdges) {
  for (const auto& r : kIPv4Ranges) expect_range_edges(r, AF_INET);
}

TEST(EgressAddress, EveryIPv6SpecialRangeAtItsEdges) {
  for (const auto& r : kIPv6Ranges) expect_range_edges(r, AF_INET6);
}

TEST(EgressAddress, NeighboursOfTheSpecialRangesArePublic) {
  struct Case {
    const char* ip;
    C cls;
  };
  for (const Case& c : std::vector<Case>{
           {"1.0.0.0", C::kPublic},
           {"9.255.255.255", C::kPublic},
           {"11.0.0.0", C::kPublic},
           {"100.63.255.255", C::kPublic},
           {"100.128.0.0", C::kPublic},
           {"126.255.255.255", C::kPublic},
           {"128.0.0.0", C::kPublic},
           {"169.253.255.255", C::kPublic},
           {"169.255.0.0", C::kPublic},
           {"172.15.255.255", C::kPublic},
           {"172.32.0.0", C::kPublic},
           {"191.255.255.255", C::kPublic},
           {"192.0.1.0", C::kPublic},
           {"192.0.3.0", C::kPublic},
           {"192.31.196.1", C::kPublic},
           {"192.52.193.1", C::kPublic},
           {"192.175.48.1", C::kPublic},
           {"192.88.98.255", C::kPublic},
           {"192.88.100.0", C::kPublic},
           {"192.167.255.255", C::kPublic},
           {"192.169.0.0", C::kPublic},
           {"198.17.255.255", C::kPublic},
           {"198.20.0.0", C::kPublic},
           {"198.51.99.255", C::kPublic},
           {"198.51.101.0", C::kPublic},
           {"203.0.112.255", C::kPublic},
           {"203.0.114.0", C::kPublic},
           {"223.255.255.255", C::kPublic},
           {"93.184.216.34", C::kPublic},
           {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::kReserved},  // below 2000::/3
           {"2000::", C::kPublic},
           {"2001:200::", C::kPublic},
           {"2001:1ff:ffff::", C::kReserved},
           {"2001:1::4", C::kReserved},
           {"2001:db7:ffff::", C::kPublic},
           {"2001:db9::", C::kPublic},
           {"2003::", C::kPublic},
           {"2606:4700::1", C::kPublic},
           {"2620:4f:8000::1", C::kPublic},
           {"3ffe:ffff::", C::kPublic},
           {"3fff:1000::", C::kPublic},
           {"4000::", C::kReserved},
           {"5eff::", C::kReserved},
           {"fbff::", C::kReserved},
           {"fe00::", C::kReserved},
           {"::2:0:0:0", C::kReserved},
           {"64:ff9a::", C::kReserved},
           {"64:ff9b:0:0:1::", C::kReserved},  // between NAT64 /96 and local-use /48
           {"100:0:0:2::", C::kReserved}}) {
    AddressInfo got = info_of(c.ip);
    EXPECT_EQ(got.cls, c.cls) << c.ip << " is " << class_name(got.cls) << ": " << got.detail;
  }
}

TEST(EgressAddress, IPv6FormsOfTheMetadataAddressAreLinkLocal) {
  struct Case {
    const char* ip;
    const char* form;
  };
  for (const Case& c : std::vector<Case>{
           {"::ffff:169.254.169.254", "IPv4-mapped (::ffff:0:0/96)"},
           {"::ffff:a9fe:a9fe", "IPv4-mapped (::ffff:0:0/96)"},
           {"::ffff:0:169.254.169.254", "IPv4-translated (::ffff:0:0:0/96)"},
           {"::169.254.169.254", "IPv4-compatible (::/96)"},
           {"::a9fe:a9fe", "IPv4-compatible (::/96)"},
           {"64:ff9b::a9fe:a9fe", "NAT64 (64:ff9b::/96)"},
           {"64:ff9b::169.254.169.254", "NAT64 (64:ff9b::/96)"},
           {"2002:a9fe:a9fe::", "6to4 (2002::/16)"},
           {"2002:a9fe:a9fe:1234:5678:9abc:def0:1", "6to4 (2002::/16)"},
           {"2001:0:4136:e378:8000:63bf:5601:5601", "Teredo (2001::/32)"},  // client = ~5601:5601
           {"2606:4700:1::5efe:a9fe:a9fe", "ISATAP (interface identifier [02]00:5efe)"},
           {"2606:4700:1::200:5efe:169.254.169.254",
            "ISATAP (interface identifier [02]00:5efe)"}}) {
    AddressInfo got = info_of(c.ip);
    EXPECT_EQ(got.cls, C::kLinkLocal)
        << c.ip << " is " << class_name(got.cls) << ": " << got.detail;
    EXPECT_NE(got.detail.find(std::string("the ") + c.form +
                              " form of 169.254.169.254, in 169.254.0.0/16"),
              std::string::npos)
        << c.ip << ": " << got.detail;
  }
  // The local-use NAT64 prefix is not global whatever it carries.
  EXPECT_EQ(info_of("64:ff9b:1::a9fe:a9fe").cls, C::kPrivate);
  EXPECT_EQ(info_of("64:ff9b:1::808:808").cls, C::kPrivate);
}

TEST(EgressAddress, EveryIPv4RangeIsTheSameInEveryIPv6Form) {
  // The first and last address of each IPv4 range, and a public one, in each form.
  std::vector<RangeCase> ranges = kIPv4Ranges;
  ranges.push_back({"8.8.8.0/24", C::kPublic});
  for (const auto& r : ranges) {
    std::string prefix(r.prefix);
    auto slash = prefix.find('/');
    Bytes base = parse(prefix.substr(0, slash), AF_INET);
    int bits = std::stoi(prefix.substr(slash + 1));
    for (bool last : {false, true}) {
      Bytes v4 = edge(base, bits, last);
      if (prefix == "240.0.0.0/4" && last)
        v4.b[3] = 254;  // 255.255.255.255 is broadcast, its own range
      char hex[16];
      std::snprintf(hex, sizeof(hex), "%02x%02x:%02x%02x", v4.b[0], v4.b[1], v4.b[2], v4.b[3]);
      char inv[16];
      std::snprintf(inv, sizeof(inv), "%02x%02x:%02x%02x", 0xff & ~v4.b[0], 0xff & ~v4.b[1],
                    0xff & ~v4.b[2], 0xff & ~v4.b[3]);
      std::string dotted = text(v4);
      for (const std::string& form :
           {"::ffff:" + dotted, "::ffff:0:" + dotted, "::" + dotted, "64:ff9b::" + dotted,
            "2002:" + std::string(hex) + "::1", "2001:0:c000:201::" + std::string(inv)}) {
        if (form == "::0.0.0.0" || form == "::0.0.0.1") continue;  // :: and ::1 themselves
        AddressInfo got = info_of(form);
        EXPECT_EQ(got.cls, r.cls) << form << " (" << dotted << ") is " << class_name(got.cls)
                                  << ": " << got.detail;
        EXPECT_NE(got.detail.find("form of " + dotted), std::string::npos)
            << form << ": " << got.detail;
      }
    }
  }
}

TEST(EgressAddress, IsatapWithAPublicAddressInsideStaysPublic) {
  EXPECT_EQ(info_of("2606:4700:1::5efe:808:808").cls, C::kPublic);
  EXPECT_EQ(info_of("2606:4700:1::200:5efe:c0a8:101").cls, C::kPrivate);  // 192.168.1.1
  EXPECT_EQ(info_of("fd00::5efe:808:808").cls, C::kPrivate);  // the prefix is private already
  EXPECT_EQ(info_of("2606:4700:1::100:5efe:c0a8:101").cls,
            C::kPublic);  // not the ISATAP identifier
}

TEST(EgressAddress, RefusesWhatIsNotAnAddress) {
  for (const std::string& bad :
       std::vector<std::string>{"localhost", "1.2.3", "1.2.3.4.5", "::ffff:1.2.3", "fe80::1%eth0",
                                "[::1]", "", " 1.2.3.4", std::string("1.2.3.4\0junk", 12)})
    EXPECT_FALSE(describe_address(bad)) << bad;
}

TEST(EgressAddress, TheRuleDecidesWithTheReasonAndTheRange) {
  Rule rule{"api.example.com", 443};
  auto nat64 = check_address(rule, "64:ff9b::a9fe:a9fe");
  EXPECT_FALSE(nat64.allowed);
  EXPECT_EQ(nat64.reason,
            "api.example.com resolved to 64:ff9b::a9fe:a9fe (link-local), which the policy does "
            "not name; it is the "
            "NAT64 (64:ff9b::/96) form of 169.254.169.254, in 169.254.0.0/16 (link-local)");
  for (const char* ip :
       {"2002:a9fe:a9fe::1", "::a9fe:a9fe", "fec0::1", "100::1", "192.0.0.1", "192.0.0.170",
        "2001:0:4136:e378:8000:63bf:5601:5601", "3fff::1", "2001:2::1", "2001:20::1"})
    EXPECT_FALSE(check_address(rule, ip).allowed) << ip;
  EXPECT_TRUE(check_address(rule, "64:ff9b::808:808").allowed);  // NAT64 of a public address
  EXPECT_TRUE(check_address(rule, "2002:808:808::1").allowed);
  rule.allow_private = true;
  EXPECT_TRUE(check_address(rule, "64:ff9b::a9fe:a9fe").allowed);
  EXPECT_TRUE(check_address(rule, "fec0::1").allowed);
  for (const char* ip : {"0.0.0.0", "0.1.2.3", "::", "224.0.0.1", "ff02::1", "255.255.255.255",
                         "64:ff9b::e000:1", "::ffff:0.0.0.0", "2002:e000:1::"}) {
    auto d = check_address(rule, ip);
    EXPECT_FALSE(d.allowed) << ip;
    EXPECT_NE(d.reason.find("which the policy can never name"), std::string::npos) << d.reason;
  }
}
