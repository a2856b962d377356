// The image of a job or session, decided when the service accepts it: the
// request's (or the configuration's default_image), allowed for the tenant
// (tenants.NAME.images), and a NAME resolved to the digest it means now, so
// the job runs on that image even if the name moves before it starts. A
// name the store does not know is kept as given: the job then ends
// input_rejected with airlock run's reason, like a missing or corrupt image.
#pragma once

#include <string>

#include "service/api_error.h"
#include "service/config.h"

namespace airlock::service {

// "host", "NAME@sha256:<hex>", or the request's text when it cannot be
// resolved. 403 when the tenant may not use the image.
ApiResult<std::string> accept_image(const ServiceConfig& config, const std::string& tenant,
                                    const std::string& requested);

// The store the service's jobs use: image_dir, else <state_dir>/images.
std::string service_image_dir(const ServiceConfig& config);

}  // namespace airlock::service
