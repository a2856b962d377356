// File types by content (src/workspace/file_type.cc: text, CSV, TSV, JSON,
// PNG, JPEG, PDF, SVG) and image sizes (src/validate/image_size.cc), both run
// on every input admitted and every output collected.
// Properties: a type's name maps back to it; a size comes with "png" or "jpeg".
#include "fuzz/fuzz.h"
#include "validate/image_size.h"
#include "workspace/file_type.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view content = airlock::fuzz::text(data, size);
  auto type = airlock::workspace::detect_type(content);
  AIRLOCK_CHECK(airlock::workspace::type_from_name(airlock::workspace::type_name(type)) == type);
  auto image = airlock::validate::image_size(content);
  if (image) AIRLOCK_CHECK(image->format == "png" || image->format == "jpeg");
  return 0;
}
