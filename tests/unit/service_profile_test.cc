// The API's "profile" field: named, checked, passed to `airlock run`;
// sessions refuse the profiles they cannot run under, saying why.
#include <gtest/gtest.h>

#include <algorithm>

#include "service/job_request.h"
#include "sessions/session_request.h"

using namespace airlock::service;
using nlohmann::json;

TEST(ProfileField, JobsNameAProfileAndTheEngineGetsIt) {
  auto standard = parse_job_request(json{{"command", {"true"}}}, {});
  ASSERT_TRUE(standard);
  EXPECT_EQ(standard->profile, "standard");
  auto compute = parse_job_request(json{{"command", {"true"}}, {"profile", "compute"}}, {});
  ASSERT_TRUE(compute) << compute.error().message();
  EXPECT_EQ(compute->profile, "compute");
  EXPECT_EQ(run_request_for(*compute, {}).profile, "compute");
}

TEST(ProfileField, UnknownOrMistypedProfilesAreRefused) {
  auto unknown = parse_job_request(json{{"command", {"true"}}, {"profile", "wide-open"}}, {});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message(), "profile: unknown profile (available: standard, compute)");
  auto typed = parse_job_request(json{{"command", {"true"}}, {"profile", 1}}, {});
  ASSERT_FALSE(typed);
  EXPECT_EQ(typed.error().message(), "profile: must be a string");
}

TEST(ProfileField, SessionsRunUnderStandardOnly) {
  EXPECT_TRUE(parse_session_request(json{{"profile", "standard"}}, {}, {}));
  auto compute = parse_session_request(json{{"profile", "compute"}}, {}, {});
  ASSERT_FALSE(compute);
  EXPECT_NE(compute.error().message().find("compute is for jobs only"), std::string::npos)
      << compute.error().message();
  EXPECT_NE(compute.error().message().find("fork and exec"), std::string::npos);
}
