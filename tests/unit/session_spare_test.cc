// Which requests a spare session can serve (Session::spare_can_serve, pure):
// only those whose kernel would have started exactly as the spare's did.
#include <gtest/gtest.h>

#include "sessions/session.h"

namespace airlock::jobs {
namespace {

Session::Options spare() {
  Session::Options o;
  o.image = "host";
  return o;
}

TEST(SessionSpare, ADefaultRequestWithOtherLimitsIsServed) {
  Session::Options request = spare();
  request.policy.memory_bytes = 128ull << 20;
  request.policy.pids = 24;
  request.policy.workspace_bytes = 16ull << 20;
  request.inputs = {"/some/input.csv"};
  EXPECT_TRUE(Session::spare_can_serve(spare(), request)) << "limits, sizes and inputs are fitted later";
}

TEST(SessionSpare, ASpareForkedFromOneTenantsInterpreterServesOnlyThatTenant) {
  auto per_tenant = [](const std::string& tenant) {
    Session::Options o = spare();
    o.tenant = tenant;
    o.tenant_zygote = [](const ImageSource&) -> Result<std::shared_ptr<sandbox::Zygote>> {
      return fail("not called: spare_can_serve is pure");
    };
    return o;
  };
  EXPECT_TRUE(Session::spare_can_serve(per_tenant("t1"), per_tenant("t1")));
  EXPECT_FALSE(Session::spare_can_serve(per_tenant("t1"), per_tenant("t2"))) << "another tenant's layout";
  EXPECT_FALSE(Session::spare_can_serve(spare(), per_tenant("t1"))) << "a spare of the shared interpreter";
}

TEST(SessionSpare, ARequestFromASnapshotIsNot) {
  Session::Options request = spare();
  request.fill_workspace = [](int, uid_t, gid_t) { return Status{}; };
  EXPECT_FALSE(Session::spare_can_serve(spare(), request)) << "its kernel must start on the restored workspace";
}

TEST(SessionSpare, ARequestWithItsOwnEnvironmentIsNot) {
  Session::Options request = spare();
  request.policy.env = {{"AIRLOCK_MINE", "1"}};
  EXPECT_FALSE(Session::spare_can_serve(spare(), request)) << "the spare's kernel started without the variable";
  request.policy.env = {{"HOME", "/tmp"}};  // a base variable with another value
  EXPECT_FALSE(Session::spare_can_serve(spare(), request));
}

TEST(SessionSpare, ARequestWithNetworkDestinationsIsNot) {
  Session::Options request = spare();
  request.policy.allow.push_back({});  // any destination: the proxies are in the environment
  EXPECT_FALSE(Session::spare_can_serve(spare(), request));
}

TEST(SessionSpare, ARequestOnAnotherImageIsNot) {
  Session::Options request = spare();
  request.image = "sha256:" + std::string(64, 'a');
  EXPECT_FALSE(Session::spare_can_serve(spare(), request));
}

}  // namespace
}  // namespace airlock::jobs
