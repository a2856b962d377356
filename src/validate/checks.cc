#include "validate/checks.h"

#include <time.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>
#include <tuple>
#include <algorithm>

#include "validate/csv.h"
#include "validate/image_size.h"
#include "validate/json_schema.h"
#include "validate/junit.h"
#include "validate/office.h"
#include "workspace/file_type.h"
#include "validate/text.h"

namespace airlock::validate {
namespace {

using nlohmann::json;

constexpr size_t kMaxDetailBytes = 2000;
constexpr size_t kMaxNameBytes = 128;
constexpr size_t kMaxFileNameBytes = 4096;
constexpr size_t kMaxSumInputs = 64;

// --- Typed specs, parsed from a check's JSON ------------------------------

struct ColumnRef {
  std::string file;
  std::string column;
};

struct CsvSumSpec {
  std::string output;
  std::string column;
  std::vector<ColumnRef> inputs;
  double tolerance = 1e-9;
  std::optional<double> relative_tolerance;
};

struct RowCountSpec {
  std::string output;
  std::optional<uint64_t> min, max;
};

struct SchemaSpec {
  std::string output;
  const json* schema = nullptr;
};

struct ImageSpec {
  std::string output;
  std::optional<uint64_t> min_width, max_width, min_height, max_height;
};

struct JunitSpec {
  std::string output;
  uint64_t min_tests = 1, max_failures = 0, max_errors = 0;
  std::optional<uint64_t> max_skipped;
};

struct PdfSpec {
  std::string output;
  std::optional<uint64_t> min_pages, max_pages;
  std::optional<double> min_page_width, max_page_width, min_page_height, max_page_height;
  std::vector<std::string> contains, excludes;
  std::set<std::string> allow;  // of kPdfAllowable
};

const std::vector<std::string_view> kPdfAllowable = {"javascript", "launch", "uri", "embedded_files", "encryption"};

struct ArchiveSpec {
  std::string output;
  ArchiveBounds bounds;
  std::optional<workspace::TypeSet> member_types;
};

struct OfficeSpec {
  std::string output;
  ArchiveBounds bounds;
  bool allow_hyperlinks = false;
};

constexpr uint64_t kMaxArchiveMembers = 10000;
constexpr uint64_t kMaxArchiveDepth = 3;

constexpr size_t kMaxPhrases = 16;
constexpr size_t kMaxPhraseBytes = 1000;

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (auto item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

// Field access with errors of the form `checks[2].field: ...`.
class Fields {
 public:
  Fields(const json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  Status only(const std::vector<std::string_view>& allowed) const {
    for (const auto& [key, value] : obj_.items()) {
      bool known = false;
      for (auto a : allowed) known = known || key == a;
      if (!known)
        return fail(where_ + ": unknown field " + in_quotes(key) + " (allowed: " + join(allowed) + ")");
    }
    return {};
  }

  const json* find(std::string_view key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }

  std::string at(std::string_view key) const { return where_ + "." + std::string(key); }

  Result<std::string> string(std::string_view key, size_t max_bytes) const {
    const json* v = find(key);
    if (!v) return fail(at(key) + ": missing (a string is required)");
    if (!v->is_string()) return fail(at(key) + ": must be a string");
    const auto& s = v->get_ref<const std::string&>();
    if (s.empty() || s.size() > max_bytes || s.find('\0') != std::string::npos)
      return fail(at(key) + ": must be a non-empty string of at most " + std::to_string(max_bytes) +
                  " bytes without NUL");
    return s;
  }

  Result<std::optional<uint64_t>> count(std::string_view key) const {
    const json* v = find(key);
    if (!v) return std::optional<uint64_t>{};
    if (v->is_number_unsigned()) return std::optional<uint64_t>{v->get<uint64_t>()};
    if (v->is_number_integer() && v->get<int64_t>() >= 0)
      return std::optional<uint64_t>{static_cast<uint64_t>(v->get<int64_t>())};
    return fail(at(key) + ": must be a non-negative integer");
  }

  Result<std::optional<double>> non_negative(std::string_view key) const {
    const json* v = find(key);
    if (!v) return std::optional<double>{};
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0)
      return fail(at(key) + ": must be a non-negative number");
    return std::optional<double>{v->get<double>()};
  }

  const std::string& where() const { return where_; }

 private:
  const json& obj_;
  std::string where_;
};

Status bounds_in_order(const Fields& f, const std::optional<uint64_t>& min,
                       const std::optional<uint64_t>& max, std::string_view min_key,
                       std::string_view max_key) {
  if (min && max && *min > *max)
    return fail(f.at(min_key) + ": " + std::to_string(*min) + " is greater than " +
                std::string(max_key) + " " + std::to_string(*max));
  return {};
}

Result<CsvSumSpec> parse_csv_sum(const Fields& f) {
  if (auto s = f.only({"kind", "name", "output", "column", "inputs", "tolerance",
                       "relative_tolerance"});
      !s)
    return std::unexpected(s.error());
  CsvSumSpec spec;
  auto output = f.string("output", kMaxFileNameBytes);
  if (!output) return std::unexpected(output.error());
  spec.output = *output;
  auto column = f.string("column", kMaxFileNameBytes);
  if (!column) return std::unexpected(column.error());
  spec.column = *column;
  const json* inputs = f.find("inputs");
  if (!inputs) return fail(f.at("inputs") + ": missing (an array of {\"file\", \"column\"} is required)");
  if (!inputs->is_array() || inputs->empty() || inputs->size() > kMaxSumInputs)
    return fail(f.at("inputs") + ": must be an array of 1 to " + std::to_string(kMaxSumInputs) +
                " {\"file\", \"column\"} objects");
  for (size_t i = 0; i < inputs->size(); ++i) {
    std::string where = f.at("inputs") + "[" + std::to_string(i) + "]";
    if (!(*inputs)[i].is_object()) return fail(where + ": must be an object {\"file\", \"column\"}");
    Fields in((*inputs)[i], where);
    if (auto s = in.only({"file", "column"}); !s) return std::unexpected(s.error());
    auto file = in.string("file", kMaxFileNameBytes);
    if (!file) return std::unexpected(file.error());
    auto col = in.string("column", kMaxFileNameBytes);
    if (!col) return std::unexpected(col.error());
    spec.inputs.push_back({*file, *col});
  }
  auto tolerance = f.non_negative("tolerance");
  if (!tolerance) return std::unexpected(tolerance.error());
  if (*tolerance) spec.tolerance = **tolerance;
  auto relative = f.non_negative("relative_tolerance");
  if (!relative) return std::unexpected(relative.error());
  spec.relative_tolerance = *relative;
  return spec;
}

Result<RowCountSpec> parse_row_count(const Fields& f) {
  if (auto s = f.only({"kind", "name", "output", "min", "max"}); !s) return std::unexpected(s.error());
  RowCountSpec spec;
  auto output = f.string("output", kMaxFileNameBytes);
  if (!output) return std::unexpected(output.error());
  spec.output = *output;
  auto min = f.count("min");
  if (!min) return std::unexpected(min.error());
  auto max = f.count("max");
  if (!max) return std::unexpected(max.error());
  spec.min = *min;
  spec.max = *max;
  if (!spec.min && !spec.max) return fail(f.where() + ": needs \"min\", \"max\" or both");
  if (auto s = bounds_in_order(f, spec.min, spec.max, "min", "max"); !s)
    return std::unexpected(s.error());
  return spec;
}

Result<SchemaSpec> parse_schema_check(const Fields& f) {
  if (auto s = f.only({"kind", "name", "output", "schema"}); !s) return std::unexpected(s.error());
  SchemaSpec spec;
  auto output = f.string("output", kMaxFileNameBytes);
  if (!output) return std::unexpected(output.error());
  spec.output = *output;
  spec.schema = f.find("schema");
  if (!spec.schema) return fail(f.at("schema") + ": missing (a JSON Schema is required)");
  if (auto s = check_schema(*spec.schema); !s)
    return fail(f.at("schema") + ": " + s.error().what);
  return spec;
}

Result<ImageSpec> parse_image(const Fields& f) {
  if (auto s = f.only({"kind", "name", "output", "min_width", "max_width", "min_height",
                       "max_height"});
      !s)
    return std::unexpected(s.error());
  ImageSpec spec;
  auto output = f.string("output", kMaxFileNameBytes);
  if (!output) return std::unexpected(output.error());
  spec.output = *output;
  std::optional<uint64_t>* slots[] = {&spec.min_width, &spec.max_width, &spec.min_height,
                                      &spec.max_height};
  const char* keys[] = {"min_width", "max_width", "min_height", "max_height"};
  for (size_t i = 0; i < 4; ++i) {
    auto v = f.count(keys[i]);
    if (!v) return std::unexpected(v.error());
    *slots[i] = *v;
  }
  if (!spec.min_width && !spec.max_width && !spec.min_height && !spec.max_height)
    return fail(f.where() + ": needs at least one of \"min_width\", \"max_width\", "
                            "\"min_height\", \"max_height\"");
  if (auto s = bounds_in_order(f, spec.min_width, spec.max_width, "min_width", "max_width"); !s)
    return std::unexpected(s.error());
  if (auto s = bounds_in_order(f, spec.min_height, spec.max_height, "min_height", "max_height"); !s)
    return std::unexpected(s.error());
  return spec;
}

Result<JunitSpec> parse_junit(const Fields& f) {
  if (auto s = f.only({"kind", "name", "output", "min_tests", "max_failures", "max_errors", "max_skipped"}); !s)
    return std::unexpected(s.error());
  JunitSpec spec;
  auto output = f.string("output", kMaxFileNameBytes);
  if (!output) return std::unexpected(output.error());
  spec.output = *output;
  uint64_t* slots[] = {&spec.min_tests, &spec.max_failures, &spec.max_errors};
  const char* keys[] = {"min_tests", "max_failures", "max_errors"};
  for (size_t i = 0; i < 3; ++i) {
    auto v = f.count(keys[i]);
    if (!v) return std::unexpected(v.error());
    if (*v) *slots[i] = **v;
  }
  auto skipped = f.count("max_skipped");
  if (!skipped) return std::unexpected(skipped.error());
  spec.max_skipped = *skipped;
  return spec;
}

Result<std::vector<std::string>> phrases(const Fields& f, std::string_view key) {
  std::vector<std::string> out;
  const json* v = f.find(key);
  if (!v) return out;
  std::string shape = ": must be an array of 1 to " + std::to_string(kMaxPhrases) +
                      " non-empty strings of at most " + std::to_string(kMaxPhraseBytes) + " bytes";
  if (!v->is_array() || v->empty() || v->size() > kMaxPhrases) return fail(f.at(key) + shape);
  for (const auto& item : *v) {
    if (!item.is_string()) return fail(f.at(key) + shape);
    std::string phrase = collapse_space(item.get<std::string>());
    if (phrase.empty() || item.get_ref<const std::string&>().size() > kMaxPhraseBytes)
      return fail(f.at(key) + shape);
    out.push_back(std::move(phrase));
  }
  return out;
}

Result<PdfSpec> parse_pdf(const Fields& f) {
  if (auto s = f.only({"kind", "name", "output", "min_pages", "max_pages", "min_page_width", "max_page_width",
                       "min_page_height", "max_page_height", "contains", "excludes", "allow"});
      !s)
    return std::unexpected(s.error());
  PdfSpec spec;
  auto output = f.string("output", kMaxFileNameBytes);
  if (!output) return std::unexpected(output.error());
  spec.output = *output;
  auto min = f.count("min_pages");
  if (!min) return std::unexpected(min.error());
  auto max = f.count("max_pages");
  if (!max) return std::unexpected(max.error());
  spec.min_pages = *min;
  spec.max_pages = *max;
  if (auto s = bounds_in_order(f, spec.min_pages, spec.max_pages, "min_pages", "max_pages"); !s)
    return std::unexpected(s.error());
  auto contains = phrases(f, "contains");
  if (!contains) return std::unexpected(contains.error());
  spec.contains = std::move(*contains);
  auto excludes = phrases(f, "excludes");
  if (!excludes) return std::unexpected(excludes.error());
  spec.excludes = std::move(*excludes);
  std::optional<double>* sizes[] = {&spec.min_page_width, &spec.max_page_width, &spec.min_page_height,
                                    &spec.max_page_height};
  const char* size_keys[] = {"min_page_width", "max_page_width", "min_page_height", "max_page_height"};
  for (size_t i = 0; i < 4; ++i) {
    auto v = f.non_negative(size_keys[i]);
    if (!v) return std::unexpected(v.error());
    *sizes[i] = *v;
  }
  for (auto [lo, hi, lo_key, hi_key] : {std::tuple{spec.min_page_width, spec.max_page_width, "min_page_width", "max_page_width"},
                                        std::tuple{spec.min_page_height, spec.max_page_height, "min_page_height", "max_page_height"}})
    if (lo && hi && *lo > *hi) return fail(f.at(lo_key) + ": greater than " + hi_key);
  if (const json* allow = f.find("allow")) {
    std::string shape = ": must be an array of distinct names among " + join(kPdfAllowable);
    if (!allow->is_array()) return fail(f.at("allow") + shape);
    for (const auto& item : *allow) {
      if (!item.is_string()) return fail(f.at("allow") + shape);
      const auto& v = item.get_ref<const std::string&>();
      if (std::find(kPdfAllowable.begin(), kPdfAllowable.end(), v) == kPdfAllowable.end())
        return fail(f.at("allow") + ": unknown " + in_quotes(v) + " (allowed: " + join(kPdfAllowable) + ")");
      if (!spec.allow.insert(v).second) return fail(f.at("allow") + ": " + in_quotes(v) + " named twice");
    }
  }
  return spec;
}

// The bounds shared by archive and office checks, each optional.
Status parse_bounds(const Fields& f, ArchiveBounds& b) {
  auto members = f.count("max_members");
  if (!members) return std::unexpected(members.error());
  if (*members) {
    if (**members == 0 || **members > kMaxArchiveMembers)
      return fail(f.at("max_members") + ": must be 1 to " + std::to_string(kMaxArchiveMembers));
    b.max_members = **members;
  }
  for (auto [key, slot] : {std::pair{"max_member_bytes", &b.max_member_bytes}, std::pair{"max_total_bytes", &b.max_total_bytes}}) {
    auto v = f.count(key);
    if (!v) return std::unexpected(v.error());
    if (*v) {
      if (**v == 0 || **v > (uint64_t{1} << 40)) return fail(f.at(key) + ": must be 1 to 2^40 bytes");
      *slot = **v;
    }
  }
  auto depth = f.count("max_depth");
  if (!depth) return std::unexpected(depth.error());
  if (*depth) {
    if (**depth > kMaxArchiveDepth) return fail(f.at("max_depth") + ": must be 0 to " + std::to_string(kMaxArchiveDepth));
    b.max_depth = **depth;
  }
  auto ratio = f.non_negative("max_ratio");
  if (!ratio) return std::unexpected(ratio.error());
  if (*ratio) {
    if (**ratio < 1 || **ratio > 1e6) return fail(f.at("max_ratio") + ": must be a number from 1 to 1000000");
    b.max_ratio = **ratio;
  }
  return {};
}

Result<ArchiveSpec> parse_archive(const Fields& f) {
  if (auto s = f.only({"kind", "name", "output", "max_members", "max_member_bytes", "max_total_bytes", "max_ratio",
                       "max_depth", "member_types"});
      !s)
    return std::unexpected(s.error());
  ArchiveSpec spec;
  auto output = f.string("output", kMaxFileNameBytes);
  if (!output) return std::unexpected(output.error());
  spec.output = *output;
  if (auto s = parse_bounds(f, spec.bounds); !s) return std::unexpected(s.error());
  if (const json* types = f.find("member_types")) {
    std::string shape = ": must be a non-empty array of file types (text, csv, tsv, json, png, jpeg, pdf, svg, xml, archive, binary)";
    if (!types->is_array() || types->empty() || types->size() > 16) return fail(f.at("member_types") + shape);
    workspace::TypeSet set;
    for (const auto& item : *types) {
      if (!item.is_string()) return fail(f.at("member_types") + shape);
      auto type = workspace::type_from_name(item.get<std::string>());
      if (!type) return fail(f.at("member_types") + ": unknown type " + in_quotes(item.get<std::string>()) + shape.substr(1));
      set.insert(*type);
    }
    spec.member_types = std::move(set);
  }
  return spec;
}

Result<OfficeSpec> parse_office(const Fields& f) {
  if (auto s = f.only({"kind", "name", "output", "max_members", "max_member_bytes", "max_total_bytes", "max_ratio",
                       "max_depth", "allow_hyperlinks"});
      !s)
    return std::unexpected(s.error());
  OfficeSpec spec;
  spec.bounds.max_depth = 1;  // a chart in a document holds its workbook, an embedded package
  auto output = f.string("output", kMaxFileNameBytes);
  if (!output) return std::unexpected(output.error());
  spec.output = *output;
  if (auto s = parse_bounds(f, spec.bounds); !s) return std::unexpected(s.error());
  if (const json* v = f.find("allow_hyperlinks")) {
    if (!v->is_boolean()) return fail(f.at("allow_hyperlinks") + ": must be true or false");
    spec.allow_hyperlinks = v->get<bool>();
  }
  return spec;
}

const std::vector<std::string_view> kKinds = {"csv_column_sum", "csv_row_count", "json_schema",
                                              "image_dimensions", "junit", "pdf", "archive", "office"};

// Checks one element's shape; returns its kind.
Result<std::string> check_shape(const json& element, const std::string& where) {
  if (!element.is_object()) return fail(where + ": must be an object");
  Fields f(element, where);
  auto kind = f.string("kind", 64);
  if (!kind) return std::unexpected(kind.error());
  Status shape;
  if (*kind == "csv_column_sum") {
    if (auto s = parse_csv_sum(f); !s) shape = std::unexpected(s.error());
  } else if (*kind == "csv_row_count") {
    if (auto s = parse_row_count(f); !s) shape = std::unexpected(s.error());
  } else if (*kind == "json_schema") {
    if (auto s = parse_schema_check(f); !s) shape = std::unexpected(s.error());
  } else if (*kind == "image_dimensions") {
    if (auto s = parse_image(f); !s) shape = std::unexpected(s.error());
  } else if (*kind == "junit") {
    if (auto s = parse_junit(f); !s) shape = std::unexpected(s.error());
  } else if (*kind == "pdf") {
    if (auto s = parse_pdf(f); !s) shape = std::unexpected(s.error());
  } else if (*kind == "archive") {
    if (auto s = parse_archive(f); !s) shape = std::unexpected(s.error());
  } else if (*kind == "office") {
    if (auto s = parse_office(f); !s) shape = std::unexpected(s.error());
  } else {
    return fail(f.at("kind") + ": unknown kind " + in_quotes(*kind) + " (supported: " + join(kKinds) +
                ")");
  }
  if (!shape) return std::unexpected(shape.error());
  if (const json* name = f.find("name")) {
    if (!name->is_string() || name->get_ref<const std::string&>().empty() ||
        name->get_ref<const std::string&>().size() > kMaxNameBytes)
      return fail(f.at("name") + ": must be a non-empty string of at most " +
                  std::to_string(kMaxNameBytes) + " bytes");
  }
  return *kind;
}

// --- Running --------------------------------------------------------------

uint64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

// The limits and the CPU time the checks of one run have used so far.
class Budget {
 public:
  explicit Budget(const CheckLimits& limits) : limits(limits), start_(thread_cpu_ns()) {}
  bool spent() {
    if (!spent_) spent_ = thread_cpu_ns() - start_ > limits.cpu_ms * 1'000'000;
    return spent_;
  }
  // Polled every so often inside a long loop: the clock is a system call.
  bool spent_every(uint64_t& counter) { return (++counter & 1023) == 0 && spent(); }
  std::string stopped() const { return "check stopped: CPU budget of " + std::to_string(limits.cpu_ms) + " ms used"; }
  const CheckLimits& limits;

 private:
  uint64_t start_;
  bool spent_ = false;
};

// Reads a whole (small) file; an error past `cap` bytes.
Result<std::string> read_capped(const std::string& name, ByteSource& source, size_t cap, const char* what) {
  std::string text;
  char buf[65536];
  for (;;) {
    auto n = source(buf, sizeof buf);
    if (!n) return std::unexpected(n.error());
    if (*n == 0) return text;
    if (text.size() + *n > cap)
      return fail(printable(name, 200) + ": more than the " + std::to_string(cap) + " bytes " + what);
    text.append(buf, *n);
  }
}

std::string no_output(const std::string& name) {
  return "no accepted output named " + in_quotes(name, 300);
}

// Decimals enough to show a difference of `tolerance`: 2 at least, 12 at most.
int decimals_for(double tolerance) {
  if (!(tolerance > 0)) return 12;
  int d = static_cast<int>(std::ceil(-std::log10(tolerance)));
  return std::clamp(d, 2, 12);
}

std::string format_number(double x, int decimals) {
  char buf[64];
  if (std::fabs(x) < 1e15)
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  else
    std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string format_tolerance(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

std::string column_name(const std::string& file, const std::string& column) {
  return printable(file, 200) + ":" + printable(column, 100);
}

// Neumaier-compensated sum of one column, streamed; errors name the file,
// column and row.
Result<double> sum_column(const std::string& file, ByteSource source, const std::string& column, Budget& budget) {
  CsvReader reader(std::move(source), budget.limits.record_bytes);
  auto header = reader.header();
  if (!header) return fail(printable(file, 200) + ": " + header.error().what);
  auto index = find_column(CsvTable{*header, {}, {}}, column);
  if (!index) return fail(printable(file, 200) + ": " + index.error().what);
  double sum = 0, compensation = 0;
  uint64_t polls = 0;
  for (size_t r = 0;; ++r) {
    if (budget.spent_every(polls)) return fail(budget.stopped());
    auto row = reader.next_row();
    if (!row) return fail(printable(file, 200) + ": " + row.error().what);
    if (!*row) break;
    const std::string& cell = (**row)[*index];
    auto value = parse_number(cell);
    if (!value) {
      std::string where = column_name(file, column) + " row " + std::to_string(r + 1) + " (line " +
                          std::to_string(reader.row_line()) + ")";
      bool blank = cell.find_first_not_of(" \t") == std::string::npos;
      return fail(where + (blank ? ": empty cell" : ": " + in_quotes(cell, 60) + " is not a number"));
    }
    double t = sum + *value;
    if (std::fabs(sum) >= std::fabs(*value))
      compensation += (sum - t) + *value;
    else
      compensation += (*value - t) + sum;
    sum = t;
  }
  double total = sum + compensation;
  if (!std::isfinite(total)) return fail("sum of " + column_name(file, column) + " overflows");
  return total;
}

CheckResult run_csv_sum(const CsvSumSpec& spec, const FileSource& outputs, const FileSource& inputs,
                        Budget& budget) {
  CheckResult r;
  auto out_file = outputs(spec.output);
  if (!out_file) return {.detail = no_output(spec.output)};
  auto out_sum = sum_column(spec.output, std::move(*out_file), spec.column, budget);
  if (!out_sum) return {.detail = out_sum.error().what};
  double in_sum = 0;
  std::string in_names;
  for (const auto& in : spec.inputs) {
    auto file = inputs(in.file);
    if (!file) return {.detail = "no admitted input named " + in_quotes(in.file, 300)};
    auto s = sum_column(in.file, std::move(*file), in.column, budget);
    if (!s) return {.detail = s.error().what};
    in_sum += *s;
    if (!in_names.empty()) in_names += " + ";
    in_names += column_name(in.file, in.column);
  }
  if (!std::isfinite(in_sum)) return {.detail = "sum of " + in_names + " overflows"};
  double diff = std::fabs(*out_sum - in_sum);
  double allowed = spec.tolerance;
  if (spec.relative_tolerance)
    allowed = std::max(allowed, *spec.relative_tolerance * std::max(std::fabs(*out_sum), std::fabs(in_sum)));
  int decimals = decimals_for(spec.tolerance);
  std::string tolerance = "tolerance " + format_tolerance(spec.tolerance);
  if (spec.relative_tolerance)
    tolerance += ", relative tolerance " + format_tolerance(*spec.relative_tolerance);
  std::string sums = "sum of " + column_name(spec.output, spec.column) + " = " +
                     format_number(*out_sum, decimals) + ", sum of " + in_names + " = " +
                     format_number(in_sum, decimals);
  r.passed = diff <= allowed;
  if (r.passed)
    r.detail = sums + " (" + tolerance + ")";
  else
    r.detail = sums + ": they differ by " + format_number(diff, decimals) + ", more than the " +
               tolerance;
  return r;
}

std::string plural(uint64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

CheckResult run_row_count(const RowCountSpec& spec, const FileSource& outputs, Budget& budget) {
  auto file = outputs(spec.output);
  if (!file) return {.detail = no_output(spec.output)};
  CsvReader reader(std::move(*file), budget.limits.record_bytes);
  auto header = reader.header();
  if (!header) return {.detail = printable(spec.output, 200) + ": " + header.error().what};
  uint64_t rows = 0, polls = 0;
  for (;; ++rows) {
    if (budget.spent_every(polls)) return {.detail = budget.stopped()};
    auto row = reader.next_row();
    if (!row) return {.detail = printable(spec.output, 200) + ": " + row.error().what};
    if (!*row) break;
  }
  std::string has = printable(spec.output, 200) + " has " + plural(rows, "data row");
  if (spec.min && rows < *spec.min) return {.detail = has + ", fewer than min " + std::to_string(*spec.min)};
  if (spec.max && rows > *spec.max) return {.detail = has + ", more than max " + std::to_string(*spec.max)};
  std::string bounds = spec.min ? "min " + std::to_string(*spec.min) : "";
  if (spec.max) bounds += (bounds.empty() ? "" : ", ") + std::string("max ") + std::to_string(*spec.max);
  return {.passed = true, .detail = has + " (" + bounds + ")"};
}

CheckResult run_schema(const SchemaSpec& spec, const FileSource& outputs, Budget& budget) {
  auto file = outputs(spec.output);
  if (!file) return {.detail = no_output(spec.output)};
  auto text = read_capped(spec.output, *file, budget.limits.json_bytes, "a json_schema check reads");
  if (!text) return {.detail = text.error().what};
  auto doc = parse_json_document(*text);
  if (!doc) return {.detail = printable(spec.output, 200) + ": " + doc.error().what};
  if (auto s = validate_json(*spec.schema, *doc); !s)
    return {.detail = printable(spec.output, 200) + " does not match the schema: " + s.error().what};
  return {.passed = true, .detail = printable(spec.output, 200) + " matches the schema"};
}

CheckResult run_image(const ImageSpec& spec, const FileSource& outputs, Budget& budget) {
  auto file = outputs(spec.output);
  if (!file) return {.detail = no_output(spec.output)};
  // The header is at the start: only that much is read.
  std::string bytes(budget.limits.image_bytes, '\0');
  size_t have = 0;
  while (have < bytes.size()) {
    auto n = (*file)(bytes.data() + have, bytes.size() - have);
    if (!n) return {.detail = printable(spec.output, 200) + ": " + n.error().what};
    if (*n == 0) break;
    have += *n;
  }
  bytes.resize(have);
  auto size = image_size(bytes);
  if (!size) return {.detail = printable(spec.output, 200) + ": " + size.error().what};
  std::string is = printable(spec.output, 200) + " is a " + std::to_string(size->width) + "x" +
                   std::to_string(size->height) + " " + size->format;
  // An Exif orientation that turns it: one viewer shows width x height, another height x width.
  if (size->transposed)
    is += " (its Exif orientation shows it as " + std::to_string(size->height) + "x" + std::to_string(size->width) + ")";
  struct Bound {
    const char* key;
    const std::optional<uint64_t>& limit;
    uint32_t value, shown;
    bool is_min;
  };
  uint32_t shown_width = size->transposed ? size->height : size->width;
  uint32_t shown_height = size->transposed ? size->width : size->height;
  const Bound bounds[] = {{"min_width", spec.min_width, size->width, shown_width, true},
                          {"max_width", spec.max_width, size->width, shown_width, false},
                          {"min_height", spec.min_height, size->height, shown_height, true},
                          {"max_height", spec.max_height, size->height, shown_height, false}};
  std::string shown;
  for (const Bound& b : bounds) {
    if (!b.limit) continue;
    std::string dimension = std::string(b.key).substr(4);  // "width" / "height"
    for (uint32_t value : {b.value, b.shown}) {
      if (b.is_min ? value < *b.limit : value > *b.limit)
        return {.detail = is + ": " + dimension + " " + std::to_string(value) + (value == b.value ? "" : " as shown") +
                          " is " + (b.is_min ? "below " : "above ") + b.key + " " + std::to_string(*b.limit)};
    }
    if (!shown.empty()) shown += ", ";
    shown += std::string(b.key) + " " + std::to_string(*b.limit);
  }
  return {.passed = true, .detail = is + " (" + shown + ")"};
}

CheckResult run_junit(const JunitSpec& spec, const FileSource& outputs, Budget& budget) {
  auto file = outputs(spec.output);
  if (!file) return {.detail = no_output(spec.output)};
  std::string name = printable(spec.output, 200);
  auto text = read_capped(spec.output, *file, budget.limits.xml_bytes, "a junit check reads");
  if (!text) return {.detail = text.error().what};
  XmlLimits limits;
  limits.max_bytes = budget.limits.xml_bytes;
  auto counts = junit_counts(*text, limits);
  if (!counts) return {.detail = name + " is not a JUnit XML report: " + counts.error().what};
  std::string has = name + ": " + plural(counts->tests, "test") + ", " + plural(counts->failures, "failure") +
                    ", " + plural(counts->errors, "error") + ", " + std::to_string(counts->skipped) + " skipped";
  if (counts->tests < spec.min_tests) return {.detail = has + ": fewer than min_tests " + std::to_string(spec.min_tests)};
  if (counts->failures > spec.max_failures)
    return {.detail = has + ": more than max_failures " + std::to_string(spec.max_failures)};
  if (counts->errors > spec.max_errors) return {.detail = has + ": more than max_errors " + std::to_string(spec.max_errors)};
  if (spec.max_skipped && counts->skipped > *spec.max_skipped)
    return {.detail = has + ": more than max_skipped " + std::to_string(*spec.max_skipped)};
  std::string bounds = "min_tests " + std::to_string(spec.min_tests) + ", max_failures " +
                       std::to_string(spec.max_failures) + ", max_errors " + std::to_string(spec.max_errors);
  if (spec.max_skipped) bounds += ", max_skipped " + std::to_string(*spec.max_skipped);
  return {.passed = true, .detail = has + " (" + bounds + ")"};
}

// The host's own look at a PDF before anything else reads it: "%PDF-" first
// and "%%EOF" in the last 1 KiB (as the output type detection), streamed.
Status looks_like_pdf(ByteSource& source) {
  constexpr size_t kTail = 1024;
  std::string head, tail;
  char buf[65536];
  for (;;) {
    auto n = source(buf, sizeof buf);
    if (!n) return std::unexpected(n.error());
    if (*n == 0) break;
    if (head.size() < 5) head.append(buf, std::min<size_t>(*n, 5 - head.size()));
    tail.append(buf, *n);
    if (tail.size() > kTail) tail.erase(0, tail.size() - kTail);
  }
  if (!head.starts_with("%PDF-")) return fail("not a PDF (no %PDF- header)");
  if (tail.find("%%EOF") == std::string::npos) return fail("not a complete PDF (no %%EOF in its last 1 KiB)");
  return {};
}

std::string points(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// What the document holds that the check refuses (unless allowed), and its page sizes.
std::optional<std::string> pdf_refusal(const PdfSpec& spec, const PdfFacts& facts) {
  auto allowed = [&](const char* what) { return spec.allow.contains(what); };
  if (facts.encrypted && !allowed("encryption")) return "it is encrypted";
  if (facts.javascript > 0 && !allowed("javascript")) return std::string("it holds JavaScript");
  if (facts.launch_actions > 0 && !allowed("launch")) return std::string("it holds a Launch action (runs a program)");
  if (!facts.urls.empty() && !allowed("uri"))
    return "it holds " + plural(facts.urls.size(), "URI link") + ", the first to " + in_quotes(facts.urls.front(), 200);
  if (facts.embedded_files > 0 && !allowed("embedded_files"))
    return "it holds " + plural(facts.embedded_files, "embedded file");
  if (spec.max_page_width && facts.max_page_width > *spec.max_page_width)
    return "a page " + points(facts.max_page_width) + " pt wide, more than max_page_width " + points(*spec.max_page_width);
  if (spec.max_page_height && facts.max_page_height > *spec.max_page_height)
    return "a page " + points(facts.max_page_height) + " pt high, more than max_page_height " + points(*spec.max_page_height);
  if (spec.min_page_width && facts.min_page_width < *spec.min_page_width)
    return "a page " + points(facts.min_page_width) + " pt wide, less than min_page_width " + points(*spec.min_page_width);
  if (spec.min_page_height && facts.min_page_height < *spec.min_page_height)
    return "a page " + points(facts.min_page_height) + " pt high, less than min_page_height " + points(*spec.min_page_height);
  return std::nullopt;
}

CheckResult run_pdf(const PdfSpec& spec, const FileSource& outputs, const PdfReader& reader) {
  auto file = outputs(spec.output);
  if (!file) return {.detail = no_output(spec.output)};
  std::string name = printable(spec.output, 200);
  if (auto st = looks_like_pdf(*file); !st) return {.detail = name + ": " + st.error().what};
  if (!reader) return {.detail = name + ": pdf checks need a PDF reader (poppler in a sandbox), and none is configured"};
  auto facts = reader(spec.output);
  if (!facts) return {.detail = name + ": " + facts.error().what};
  std::string has = name + " has " + plural(facts->pages, "page");
  if (spec.min_pages && facts->pages < *spec.min_pages)
    return {.detail = has + ", fewer than min_pages " + std::to_string(*spec.min_pages)};
  if (spec.max_pages && facts->pages > *spec.max_pages)
    return {.detail = has + ", more than max_pages " + std::to_string(*spec.max_pages)};
  if (auto refusal = pdf_refusal(spec, *facts)) return {.detail = has + "; " + *refusal};
  std::string text = collapse_space(facts->text);
  for (const auto& phrase : spec.contains)
    if (text.find(phrase) == std::string::npos) return {.detail = has + "; its text does not contain " + in_quotes(phrase, 100)};
  for (const auto& phrase : spec.excludes)
    if (text.find(phrase) != std::string::npos) return {.detail = has + "; its text contains " + in_quotes(phrase, 100)};
  std::string shown;
  if (!spec.contains.empty()) shown += "contains " + std::to_string(spec.contains.size()) + " required phrases";
  if (!spec.excludes.empty()) shown += (shown.empty() ? "" : ", ") + std::string("none of ") + std::to_string(spec.excludes.size()) + " excluded phrases";
  if (spec.min_pages) shown += (shown.empty() ? "" : ", ") + std::string("min_pages ") + std::to_string(*spec.min_pages);
  if (spec.max_pages) shown += (shown.empty() ? "" : ", ") + std::string("max_pages ") + std::to_string(*spec.max_pages);
  return {.passed = true, .detail = has + (shown.empty() ? "" : " (" + shown + ")")};
}

nlohmann::json members_json(const ArchiveScan& scan) {
  json members = json::array();
  for (const auto& m : scan.members) {
    json o = {{"name", printable(m.name, 1024, false)}, {"kind", kind_name(m.kind)}, {"size", m.size}};
    if (!m.sha256.empty()) o["sha256"] = m.sha256;
    if (!m.type.empty()) o["type"] = m.type;
    members.push_back(std::move(o));
  }
  return members;
}

std::string bounds_text(const ArchiveBounds& b) {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%g", b.max_ratio);
  return "max_members " + std::to_string(b.max_members) + ", max_member_bytes " + std::to_string(b.max_member_bytes) +
         ", max_total_bytes " + std::to_string(b.max_total_bytes) + ", max_ratio " + ratio +
         (b.max_depth > 0 ? ", max_depth " + std::to_string(b.max_depth) : "");
}

uint64_t total_size(const ArchiveScan& scan) {
  uint64_t total = 0;
  for (const auto& m : scan.members) total += m.size;
  return total;
}

// Scans `output` through the reader; a refusal or a failure of the reader is the result's detail.
std::optional<CheckResult> scan_output(const std::string& output, const ArchiveBounds& bounds,
                                       const ArchiveScanOptions& options, const FileSource& outputs,
                                       const ArchiveReader& reader, ArchiveScan& scan) {
  std::string name = printable(output, 200);
  if (!outputs(output)) return CheckResult{.detail = no_output(output)};
  if (!reader)
    return CheckResult{.detail = name + ": archive checks need an archive reader (libarchive in a confined process), and none is configured"};
  auto result = reader(output, bounds, options);
  if (!result) return CheckResult{.detail = name + ": " + result.error().what};
  scan = std::move(*result);
  if (scan.refused)
    return CheckResult{.detail = name + " is refused: " + *scan.refused, .members = members_json(scan)};
  return std::nullopt;
}

CheckResult run_archive(const ArchiveSpec& spec, const FileSource& outputs, const ArchiveReader& reader) {
  ArchiveScan scan;
  ArchiveScanOptions options{.type_members = spec.member_types.has_value()};
  if (auto done = scan_output(spec.output, spec.bounds, options, outputs, reader, scan)) return *done;
  std::string name = printable(spec.output, 200);
  if (spec.member_types) {
    for (const auto& m : scan.members) {
      if (m.kind != MemberKind::kFile) continue;
      auto type = workspace::type_from_name(m.type);
      if (!type || !spec.member_types->contains(*type))
        return {.detail = name + " is refused: member " + in_quotes(m.name, 200) + " is " +
                          (m.type.empty() ? "untyped" : m.type) + ", not one of " + workspace::describe_types(*spec.member_types),
                .members = members_json(scan)};
    }
  }
  return {.passed = true,
          .detail = name + ": " + printable(scan.format, 80, false) + ", " + plural(scan.members.size(), "member") + ", " +
                    std::to_string(total_size(scan)) + " bytes (" + bounds_text(spec.bounds) + ")",
          .members = members_json(scan)};
}

CheckResult run_office(const OfficeSpec& spec, const FileSource& outputs, const ArchiveReader& reader) {
  ArchiveScan scan;
  ArchiveScanOptions options{.keep_rels = true};
  if (auto done = scan_output(spec.output, spec.bounds, options, outputs, reader, scan)) return *done;
  std::string name = printable(spec.output, 200);
  if (auto refusal = office_refusal(scan, spec.allow_hyperlinks))
    return {.detail = name + " is refused: " + *refusal, .members = members_json(scan)};
  return {.passed = true,
          .detail = name + ": an Office package of " + plural(scan.members.size(), "part") + ", " +
                    plural(scan.rels.size(), "relationships part") + ", no macros, no external links" +
                    (spec.allow_hyperlinks ? " (hyperlinks allowed)" : ""),
          .members = members_json(scan)};
}

CheckResult run_one(const Check& check, size_t index, const FileSource& outputs, const FileSource& inputs,
                    Budget& budget, const PdfReader& pdf, const ArchiveReader& archive) {
  std::string where = "checks[" + std::to_string(index) + "]";
  auto invalid = [](const Error& e) { return CheckResult{.detail = "invalid check: " + e.what}; };
  if (!check.spec.is_object()) return invalid(Error{where + ": must be an object"});
  Fields f(check.spec, where);
  if (check.kind == "csv_column_sum") {
    auto spec = parse_csv_sum(f);
    return spec ? run_csv_sum(*spec, outputs, inputs, budget) : invalid(spec.error());
  }
  if (check.kind == "csv_row_count") {
    auto spec = parse_row_count(f);
    return spec ? run_row_count(*spec, outputs, budget) : invalid(spec.error());
  }
  if (check.kind == "json_schema") {
    auto spec = parse_schema_check(f);
    return spec ? run_schema(*spec, outputs, budget) : invalid(spec.error());
  }
  if (check.kind == "image_dimensions") {
    auto spec = parse_image(f);
    return spec ? run_image(*spec, outputs, budget) : invalid(spec.error());
  }
  if (check.kind == "junit") {
    auto spec = parse_junit(f);
    return spec ? run_junit(*spec, outputs, budget) : invalid(spec.error());
  }
  if (check.kind == "pdf") {
    auto spec = parse_pdf(f);
    return spec ? run_pdf(*spec, outputs, pdf) : invalid(spec.error());
  }
  if (check.kind == "archive") {
    auto spec = parse_archive(f);
    return spec ? run_archive(*spec, outputs, archive) : invalid(spec.error());
  }
  if (check.kind == "office") {
    auto spec = parse_office(f);
    return spec ? run_office(*spec, outputs, archive) : invalid(spec.error());
  }
  return invalid(Error{where + ": unknown kind " + in_quotes(check.kind)});
}

}  // namespace

Result<std::vector<Check>> parse_checks(const json& checks) {
  std::vector<Check> parsed;
  if (checks.is_null()) return parsed;
  if (!checks.is_array()) return fail("checks: must be an array");
  if (checks.size() > kMaxChecks)
    return fail("checks: at most " + std::to_string(kMaxChecks) + " checks, got " +
                std::to_string(checks.size()));
  std::set<std::string> labels;
  for (size_t i = 0; i < checks.size(); ++i) {
    std::string where = "checks[" + std::to_string(i) + "]";
    auto kind = check_shape(checks[i], where);
    if (!kind) return std::unexpected(kind.error());
    Check check{*kind, checks[i], ""};
    auto name = checks[i].find("name");
    check.label = name != checks[i].end() ? name->get<std::string>() : *kind + "#" + std::to_string(i);
    if (!labels.insert(check.label).second)
      return fail(where + ".name: the label " + in_quotes(check.label) + " is used by an earlier check");
    parsed.push_back(std::move(check));
  }
  return parsed;
}

std::vector<CheckResult> run_checks(const std::vector<Check>& checks, const FileSource& outputs,
                                    const FileSource& inputs, const CheckLimits& limits, const PdfReader& pdf,
                                    const ArchiveReader& archive) {
  std::vector<CheckResult> results;
  results.reserve(checks.size());
  Budget budget(limits);
  for (size_t i = 0; i < checks.size(); ++i) {
    CheckResult r =
        budget.spent() ? CheckResult{.detail = budget.stopped()} : run_one(checks[i], i, outputs, inputs, budget, pdf, archive);
    r.label = checks[i].label;
    r.kind = checks[i].kind;
    r.detail = truncate_utf8(std::move(r.detail), kMaxDetailBytes);
    results.push_back(std::move(r));
  }
  return results;
}

json to_json(const CheckResult& r) {
  json j{{"label", r.label}, {"kind", r.kind}, {"passed", r.passed}, {"detail", r.detail}};
  if (!r.members.is_null()) j["members"] = r.members;
  return j;
}

}  // namespace airlock::validate
