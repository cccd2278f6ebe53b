#include "config/yaml_json.h"

namespace tessera {

nlohmann::ordered_json YamlToJson(const YAML::Node& n) {
  using json = nlohmann::ordered_json;
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : n)
        out[kv.first.Scalar()] = YamlToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& v : n)
        out.push_back(YamlToJson(v));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true" || s == "false") return s == "true";
      if (s == "null" || s == "~") return nullptr;
      auto number = json::parse(s, nullptr, false);
      if (!number.is_discarded() && number.is_number()) return number;
      return s;
    }
    default:
      return nullptr;
  }
}

nlohmann::ordered_json DiagnosticsJson(const Diagnostics& diagnostics) {
  nlohmann::ordered_json errors = nlohmann::ordered_json::array();
  for (const Diagnostic& d : diagnostics.Sorted()) {
    errors.push_back({{"file", d.pos.file},
                      {"line", d.pos.line},
                      {"column", d.pos.column},
                      {"field", d.path},
                      {"message", d.message}});
  }
  return errors;
}

}  // namespace tessera
