// The egress side of one job: the gateway that is the job's only way out.
// Before the sandbox starts, prepare() reads the operator's files (hosts
// overrides, secrets, CA) and checks the job's rules against them; once the
// sandbox's network namespace exists, start() binds the gateway's socket
// inside it (127.0.0.1:kGatewayPort) and serves it from host threads. The
// object stops the gateway when destroyed; finish() stops it and hands back
// every attempt for the record.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "egress/gateway.h"
#include "jobs/policy.h"

namespace airlock::jobs {

struct EgressFiles {
  std::string hosts;    // static name overrides ("" none)
  std::string secrets;  // root-only secrets file ("" none)
  std::string ca;       // CA certificates for tls rules ("" the system's)
};

struct EgressPlan {
  egress::GatewayConfig config;
  std::string refusal;  // non-empty: the request itself is at fault (input_rejected)
};

// Reads the files the rules need. An Error is airlock's (or the operator's)
// problem; a refusal is the job's (it names a secret that does not exist).
Result<EgressPlan> prepare_egress(const std::vector<egress::Rule>& rules, const EgressFiles& files);

class JobEgress {
 public:
  static Result<JobEgress> start(egress::GatewayConfig config, int sandbox_pidfd);
  JobEgress(JobEgress&&) = default;
  ~JobEgress() = default;  // the gateway stops with it

  struct Attempts {
    std::vector<egress::Attempt> list;
    uint64_t dropped = 0;
  };
  Attempts finish();

 private:
  explicit JobEgress(std::unique_ptr<egress::Gateway> gateway) : gateway_(std::move(gateway)) {}
  std::unique_ptr<egress::Gateway> gateway_;
};

}  // namespace airlock::jobs
