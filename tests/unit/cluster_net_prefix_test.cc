// The cluster harness's choice of a /24 for its bridge (tests/support/cluster_net.h):
// never one the host has an address in, nor one inside a wider 10.x network of the host.
#include <gtest/gtest.h>

#include "support/cluster_net.h"

using airlock::testing::free_prefix;

namespace {

std::string addr_line(const std::string& cidr) { return "2: eth0    inet " + cidr + " brd 0.0.0.0 scope global eth0\n"; }

}  // namespace

TEST(ClusterNetPrefix, IsA24OfTenSlashEightAndStableForASeed) {
  std::string p = free_prefix("", 1234);
  ASSERT_EQ(p.rfind("10.", 0), 0u) << p;
  EXPECT_EQ(std::count(p.begin(), p.end(), '.'), 2) << p;
  EXPECT_EQ(free_prefix("", 1234), p);
  EXPECT_NE(free_prefix("", 1235), p);
}

TEST(ClusterNetPrefix, SkipsA24TheHostHasAnAddressIn) {
  std::string first = free_prefix("", 77);
  std::string taken = addr_line(first + ".9/24");
  std::string other = free_prefix(taken, 77);
  EXPECT_NE(other, first);
  EXPECT_EQ(other.rfind("10.", 0), 0u);
}

TEST(ClusterNetPrefix, SkipsA24InsideAWiderHostNetwork) {
  std::string first = free_prefix("", 5);  // 10.A.B
  std::string a = first.substr(0, first.rfind('.'));  // 10.A
  // The host holds 10.A.0.1/16: every 10.A.x.0/24 is inside its network.
  std::string other = free_prefix(addr_line(a + ".0.1/16"), 5);
  EXPECT_NE(other.substr(0, other.rfind('.')), a) << other;
  // And a host on all of 10/8 leaves nothing to choose.
  EXPECT_EQ(free_prefix(addr_line("10.1.2.3/8"), 5), "");
}

TEST(ClusterNetPrefix, AddressesOutsideTenSlashEightDoNotMatter) {
  std::string p = free_prefix("", 9);
  EXPECT_EQ(free_prefix(addr_line("192.0.2.2/24") + addr_line("127.0.0.1/8"), 9), p);
}
