// Pure rules of the store's queue (docs/store.md "Queue and nodes"): how a
// node's warm images are stored, and which queued job a node leaves to a
// node that has its image warm. No SQL here: unit-tested alone.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::store {

// nodes.warm_images is one comma-separated text: names with a comma (or
// empty) are refused, as is an empty node id.
Status check_node_fields(const std::string& node_id, const std::vector<std::string>& warm_images);
std::string join_images(const std::vector<std::string>& images);
std::vector<std::string> split_images(std::string_view text);

// The image name of an accepted reference: "python:3.12@sha256:..." -> "python:3.12".
std::string_view image_name(std::string_view ref);

// What claim_job knows about one candidate job and the cluster.
struct WarmCheck {
  std::string_view job_image;  // the job's accepted image ref ("" = none)
  int64_t created_ms = 0, now_ms = 0, prefer_warm_ms = 0;
  const std::vector<std::string>* mine = nullptr;      // this node's warm images
  const std::set<std::string>* others = nullptr;       // warm on another up node with a free slot
};

// true: another node has the job's image warm, this one does not, and the
// job is younger than prefer_warm_ms: leave it to that node for now.
bool leave_to_warm_node(const WarmCheck& c);

}  // namespace airlock::store
