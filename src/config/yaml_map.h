// Internal to config: typed, position-aware reading of YAML mappings. Every accessor records
// the key as known; Finish() reports the keys nobody asked for as unknown fields, with a
// "did you mean" where one is close. Errors go to the builder's diagnostics; accessors
// return std::nullopt when the field is missing or wrong, so parsing continues and every
// error in a file is reported.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/builder.h"

namespace tessera::config_internal {

enum class Need { kOptional, kRequired };

SourcePos PosOf(const std::string& file, const YAML::Node& node);
// A short description of a node's type for error messages: "a mapping", "a list", "\"abc\"".
std::string Describe(const YAML::Node& node);

class YamlMap {
 public:
  // Reports an error (and !ok()) unless `node` is a mapping.
  YamlMap(SpecBuilder& b, const std::string& file, const YAML::Node& node, FieldPath path,
          std::string_view what);
  ~YamlMap();  // calls Finish() if not called yet

  bool ok() const { return ok_; }
  const FieldPath& path() const { return path_; }
  SourcePos pos() const { return PosOf(file_, node_); }
  const std::string& file() const { return file_; }
  SpecBuilder& builder() { return b_; }

  bool Has(std::string_view key) const;
  // The raw node of a field (marks it known), or nullopt (error if required).
  std::optional<YAML::Node> Node(std::string_view key, Need need);

  std::optional<std::string> Str(std::string_view key, Need need = Need::kOptional);
  std::optional<bool> Bool(std::string_view key, Need need = Need::kOptional);
  // An integer in [min, max].
  std::optional<int64_t> Int(std::string_view key, int64_t min, int64_t max,
                             Need need = Need::kOptional);
  // A non-negative decimal in milli-units ("1.5" -> 1500), at most `max` (in milli).
  std::optional<Milli> MilliValue(std::string_view key, Need need = Need::kOptional,
                                  Milli max = Milli{1} << 50);
  std::optional<MiB> Memory(std::string_view key, Need need = Need::kOptional);
  std::optional<Millis> Duration(std::string_view key, Need need = Need::kOptional);
  std::optional<Mbps> Bandwidth(std::string_view key, Need need = Need::kOptional);
  // One of `allowed`.
  std::optional<std::string> Enum(std::string_view key, std::vector<std::string_view> allowed,
                                  Need need = Need::kOptional);
  // A list of strings (a single string is accepted as a list of one).
  std::vector<std::string> StrList(std::string_view key, Need need = Need::kOptional);
  // A mapping of string to string.
  std::map<std::string, std::string> Labels(std::string_view key);
  // Calls `item` for each element of a list, with its path.
  void List(std::string_view key, Need need,
            const std::function<void(const YAML::Node&, const FieldPath&, size_t)>& item);
  // Same, with a merged index offset for the top-level lists of a file.
  void List(std::string_view key, Need need, size_t merged_offset,
            const std::function<void(const YAML::Node&, const FieldPath&, size_t)>& item);
  // Calls `item` for each key of a mapping field.
  void Entries(
      std::string_view key,
      const std::function<void(const std::string&, const YAML::Node&, const FieldPath&)>& item);

  // Report an error at a field (at its value if present, else at the mapping).
  void ErrorAt(std::string_view key, std::string message);
  void Error(std::string message);

  // Reports unknown keys.
  void Finish();
  // For a mapping whose shape could not be determined: its keys are not reported.
  void SkipUnknownCheck() { finished_ = true; }

 private:
  std::optional<std::string> Scalar(std::string_view key, Need need, std::string_view expected);

  // The mapping's entries with plain keys, read once: yaml-cpp's own lookup walks the mapping
  // and copies its nodes at every call.
  struct Entry {
    std::string key;
    YAML::Node key_node, value;
  };
  const Entry* Find(std::string_view key) const;

  SpecBuilder& b_;
  std::string file_;
  YAML::Node node_;
  std::vector<Entry> entries_;
  FieldPath path_;
  std::string what_;
  bool ok_ = false;
  bool finished_ = false;
  std::set<std::string, std::less<>> known_;
};

// Reads a scalar node as a string (reporting an error if it is not a scalar).
std::optional<std::string> ScalarOf(SpecBuilder& b, const std::string& file, const YAML::Node& node,
                                    const FieldPath& path, std::string_view expected);

}  // namespace tessera::config_internal
