#include "validate/office.h"

#include <algorithm>

#include "validate/text.h"
#include "validate/xml.h"

namespace airlock::validate {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view local_name(std::string_view name) {
  size_t colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

}  // namespace

Result<std::vector<Relationship>> parse_relationships(std::string_view xml) {
  std::vector<Relationship> rels;
  XmlEvents events;
  events.start = [&](const XmlStart& el) -> Status {
    if (local_name(el.name) != "Relationship") return {};
    Relationship r;
    for (const auto& a : el.attributes) {
      std::string_view n = local_name(a.name);
      if (n == "Id") r.id = a.value;
      else if (n == "Type") r.type = a.value;
      else if (n == "Target") r.target = a.value;
      // OPC spells it "External"; a reader that compares loosely still follows it.
      else if (n == "TargetMode") r.external = lower(a.value) == "external";
    }
    rels.push_back(std::move(r));
    return {};
  };
  XmlLimits limits;
  limits.max_bytes = 1 << 20;
  if (auto s = read_xml(xml, events, limits); !s) return std::unexpected(s.error());
  return rels;
}

std::optional<std::string> office_refusal(const ArchiveScan& scan, bool allow_hyperlinks) {
  bool has_content_types = false;
  for (const auto& m : scan.members) {
    std::string name = lower(m.name);
    if (name == "[content_types].xml") has_content_types = true;
    std::string_view base = name;
    if (size_t slash = base.rfind('/'); slash != std::string_view::npos) base = base.substr(slash + 1);
    if (base == "vbaproject.bin" || base == "vbadata.xml")
      return "macros: the package holds " + in_quotes(m.name, 200);
    if (name.find("externallinks/") != std::string::npos)
      return "an external link: the package holds " + in_quotes(m.name, 200);
  }
  if (!has_content_types) return std::string("not an Office package (no [Content_Types].xml)");
  for (const auto& [name, text] : scan.rels) {
    auto rels = parse_relationships(text);
    if (!rels) return "relationships part " + in_quotes(name, 200) + ": " + rels.error().what;
    for (const auto& r : *rels) {
      // Word and Excel find the macros by the relationship's type, not by the part's name.
      std::string_view kind = r.type;
      if (size_t slash = kind.rfind('/'); slash != std::string_view::npos) kind = kind.substr(slash + 1);
      if (lower(kind) == "vbaproject" || lower(kind) == "wordvbadata")
        return "macros: a " + in_quotes(kind, 60) + " relationship in " + in_quotes(name, 200) + " to " +
               in_quotes(r.target, 200);
      if (!r.external) continue;
      if (allow_hyperlinks && r.type.ends_with("/hyperlink")) continue;
      std::string_view type = r.type;
      if (size_t slash = type.rfind('/'); slash != std::string_view::npos) type = type.substr(slash + 1);
      return "an external relationship in " + in_quotes(name, 200) + ": " + in_quotes(type, 60) + " to " +
             in_quotes(r.target, 200);
    }
  }
  return std::nullopt;
}

}  // namespace airlock::validate
