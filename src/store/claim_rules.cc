#include "store/claim_rules.h"

#include <algorithm>

namespace airlock::store {

Status check_node_fields(const std::string& node_id, const std::vector<std::string>& warm_images) {
  if (node_id.empty()) return fail(ErrorKind::kInvalid, "a node needs an id");
  for (const auto& image : warm_images)
    if (image.empty() || image.find(',') != std::string::npos)
      return fail(ErrorKind::kInvalid, "warm image name '" + image + "' is empty or has a comma");
  return {};
}

std::string join_images(const std::vector<std::string>& images) {
  std::string out;
  for (const auto& image : images) {
    if (!out.empty()) out += ',';
    out += image;
  }
  return out;
}

std::vector<std::string> split_images(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    if (!part.empty()) out.emplace_back(part);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::string_view image_name(std::string_view ref) { return ref.substr(0, ref.find('@')); }

bool leave_to_warm_node(const WarmCheck& c) {
  if (c.job_image.empty() || !c.others || c.others->empty()) return false;
  if (c.now_ms - c.created_ms >= c.prefer_warm_ms) return false;  // waited long enough
  std::string_view name = image_name(c.job_image);
  auto matches = [&](std::string_view warm) { return warm == c.job_image || image_name(warm) == name; };
  if (c.mine && std::any_of(c.mine->begin(), c.mine->end(), matches)) return false;
  return std::any_of(c.others->begin(), c.others->end(), matches);
}

}  // namespace airlock::store
