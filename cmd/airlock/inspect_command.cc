// `airlock inspect-archive` (internal): the confined child of the archive and
// office checks, started by the service (service/archive_reader.h).
#include <string>
#include <vector>

#include "service/archive_reader.h"

int inspect_command(const std::vector<std::string>& args) { return airlock::service::inspect_archive_main(args); }
