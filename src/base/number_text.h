// A number as a message shows it: an integral value without a fraction
// ("1024", not std::to_string's "1024.000000"), any other in the shortest
// form that reads back as the same double ("0.5", "1.25", "1e-07").
#pragma once

#include <string>

namespace airlock {

[[nodiscard]] std::string number_text(double value);

}  // namespace airlock
