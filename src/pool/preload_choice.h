// Which preloaded interpreter a Python job starts from. A pool keeps two
// kinds: the data stack's (numpy, pandas and matplotlib imported; a copy of
// it costs milliseconds of page tables to make and to end, twice per job)
// and the standard library's (a small interpreter with common standard
// modules imported). A job whose code imports only standard modules starts
// from the small one; any other job, or one whose imports cannot be read
// (a script airlock does not have, __import__, importlib, exec), from the data
// stack's. Either interpreter runs any job alike (a module not imported ahead
// is imported by the job): the choice changes only how soon a job starts
// and what it costs the machine. Pure.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace airlock::jobs {

enum class Preload { kData, kStdlib };
std::string_view preload_name(Preload p);  // "data", "stdlib"

// The standard modules the standard library's interpreter imports ahead.
const std::vector<std::string>& stdlib_preload_modules();

// True for a top-level module name of Python's standard library (3.11's
// sys.stdlib_module_names).
bool is_stdlib_module(std::string_view top_level);

struct ImportScan {
  std::set<std::string> modules;  // top-level names: "os" for `import os.path`
  bool dynamic = false;           // __import__, importlib, exec or eval: imports not in the text
};

// The imports written in Python source: `import a.b as c, d` and
// `from a.b import c` statements, outside comments and string literals.
// Relative imports (`from . import x`) are the job's own files, not listed.
ImportScan scan_imports(std::string_view source);

// kStdlib when `source` imports only standard modules (or none); else kData.
Preload preload_for_source(std::string_view source);

}  // namespace airlock::jobs
