#include "service/image_choice.h"

#include "images/image_ref.h"
#include "images/image_store.h"

namespace airlock::service {

std::string service_image_dir(const ServiceConfig& c) {
  return c.image_dir.empty() ? images::ImageStore::default_root(c.state_dir) : c.image_dir;
}

ApiResult<std::string> accept_image(const ServiceConfig& c, const std::string& tenant,
                                    const std::string& requested) {
  const std::string text = requested.empty() ? c.default_image : requested;
  auto ref = images::parse_image_ref(text);
  if (!ref) return api_error(400, "bad_request", "image: " + ref.error().message());
  if (!tenant_may_use_image(c, tenant, ref->name))
    return api_error(403, "forbidden", "image: tenant " + tenant + " may not use the image '" + ref->name + "'");
  if (ref->name == images::kHostImage || !ref->digest.empty()) return text;
  auto stored = images::ImageStore(service_image_dir(c)).resolve(*ref);
  if (!stored) return text;  // refused with the reason when the job runs
  return images::format_image_ref({ref->name, stored->digest});
}

}  // namespace airlock::service
