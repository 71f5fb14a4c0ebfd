// The root of a YAML file format: see yaml_reader.h.
#include "yaml_reader.h"

namespace schedlab {

YamlRoot YamlReader::root_mapping(const std::string& what, const std::vector<std::string>& allowed,
                                  const std::vector<std::string>& required,
                                  const std::string& where) const {
  YamlRoot root;
  try {
    root.map = YAML::Load(text_);
  } catch (const YAML::ParserException& e) {
    throw UserError(loc(e.mark), "invalid YAML: " + e.msg);
  }
  // The document's first token; an empty document has no mark.
  root.top = root.map.Mark().is_null() ? SourceLoc{path_, 1, 1} : loc(root.map);
  if (!root.map.IsMap())
    user_error_at(root.top) << "expected " << what << "; found " << kind_name(root.map);
  check_keys(root.map, allowed, where);
  for (const std::string& k : required)
    if (!root.map[k]) user_error_at(root.top) << "missing required key '" << k << "'";
  return root;
}

}  // namespace schedlab
