#include "config/yaml_map.h"

#include <algorithm>

#include "common/text.h"

namespace tessera::config_internal {

SourcePos PosOf(const std::string& file, const YAML::Node& node) {
  YAML::Mark m = node.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar: {
      std::string s = node.Scalar();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "\"" + s + "\"";
    }
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "?";
}

std::optional<std::string> ScalarOf(SpecBuilder& b, const std::string& file, const YAML::Node& node,
                                    const FieldPath& path, std::string_view expected) {
  if (!node.IsScalar()) {
    b.ErrorAt(path, PosOf(file, node),
              "expected " + std::string(expected) + ", got " + Describe(node));
    return std::nullopt;
  }
  return node.Scalar();
}

YamlMap::YamlMap(SpecBuilder& b, const std::string& file, const YAML::Node& node, FieldPath path,
                 std::string_view what)
    : b_(b), file_(file), node_(node), path_(std::move(path)), what_(what) {
  b_.Record(path_, PosOf(file_, node_));
  if (!node_.IsMap()) {
    b_.ErrorAt(path_, PosOf(file_, node_),
               "expected " + std::string(what) + " (a mapping), got " + Describe(node_));
    return;
  }
  ok_ = true;
  // Duplicate keys: yaml-cpp keeps both silently; a config with two values for one field is
  // ambiguous, so it is an error.
  entries_.reserve(node_.size());
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) {
      b_.ErrorAt(path_, PosOf(file_, it->first), "keys must be plain names");
      continue;
    }
    const std::string& key = it->first.Scalar();
    if (Find(key) != nullptr) {
      b_.ErrorAt(path_.Field(key), PosOf(file_, it->first), "duplicate key \"" + key + "\"");
    }
    entries_.push_back({key, it->first, it->second});
  }
}

const YamlMap::Entry* YamlMap::Find(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;  // the first, as yaml-cpp's lookup
  }
  return nullptr;
}

YamlMap::~YamlMap() {
  if (!finished_) Finish();
}

bool YamlMap::Has(std::string_view key) const {
  return Find(key) != nullptr;
}

std::optional<YAML::Node> YamlMap::Node(std::string_view key, Need need) {
  known_.emplace(key);
  if (const Entry* e = Find(key)) {
    FieldPath p = path_.Field(key);
    b_.Record(p, PosOf(file_, e->value.Mark().is_null() ? e->key_node : e->value));
    if (e->value.IsNull() && need == Need::kRequired) {
      b_.ErrorAt(p, PosOf(file_, e->key_node),
                 "required field \"" + std::string(key) + "\" has no value");
      return std::nullopt;
    }
    if (e->value.IsNull()) return std::nullopt;
    return e->value;
  }
  if (!ok_) return std::nullopt;
  if (need == Need::kRequired) {
    b_.ErrorAt(path_.Field(key), pos(),
               "missing required field \"" + std::string(key) + "\" in " + what_);
  }
  return std::nullopt;
}

std::optional<std::string> YamlMap::Scalar(std::string_view key, Need need,
                                           std::string_view expected) {
  auto n = Node(key, need);
  if (!n) return std::nullopt;
  return ScalarOf(b_, file_, *n, path_.Field(key), expected);
}

void YamlMap::ErrorAt(std::string_view key, std::string message) {
  FieldPath p = path_.Field(key);
  SourcePos where = pos();
  for (const Entry& e : entries_) {
    if (e.key == key) where = PosOf(file_, e.value.IsNull() ? e.key_node : e.value);  // the last
  }
  b_.ErrorAt(p, where, std::move(message));
}

void YamlMap::Error(std::string message) {
  b_.ErrorAt(path_, pos(), std::move(message));
}

std::optional<std::string> YamlMap::Str(std::string_view key, Need need) {
  auto s = Scalar(key, need, "a string");
  if (s && s->empty() && need == Need::kRequired) {
    ErrorAt(key, "must not be empty");
    return std::nullopt;
  }
  return s;
}

std::optional<bool> YamlMap::Bool(std::string_view key, Need need) {
  auto s = Scalar(key, need, "true or false");
  if (!s) return std::nullopt;
  if (*s == "true") return true;
  if (*s == "false") return false;
  ErrorAt(key, "expected true or false, got \"" + *s + "\"");
  return std::nullopt;
}

std::optional<int64_t> YamlMap::Int(std::string_view key, int64_t min, int64_t max, Need need) {
  auto s = Scalar(key, need, "a whole number");
  if (!s) return std::nullopt;
  std::string_view t = *s;
  bool neg = !t.empty() && t[0] == '-';
  if (neg) t.remove_prefix(1);
  bool digits = !t.empty() && t.size() <= 18 &&
                std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    ErrorAt(key, "expected a whole number, got \"" + *s + "\"");
    return std::nullopt;
  }
  int64_t v = std::stoll(std::string(t));
  if (neg) v = -v;
  if (v < min || v > max) {
    ErrorAt(key, "expected a whole number from " + std::to_string(min) + " to " +
                     std::to_string(max) + ", got " + std::to_string(v));
    return std::nullopt;
  }
  return v;
}

namespace {

template <class T>
std::optional<T> Quantity(YamlMap& m, std::optional<std::string> s, std::string_view key,
                          Result<T> (*parse)(std::string_view)) {
  if (!s) return std::nullopt;
  auto r = parse(*s);
  if (!r.ok()) {
    m.ErrorAt(key, r.status().message());
    return std::nullopt;
  }
  return *r;
}

}  // namespace

std::optional<Milli> YamlMap::MilliValue(std::string_view key, Need need, Milli max) {
  auto v = Quantity<Milli>(*this, Scalar(key, need, "a number"), key, &ParseMilli);
  if (v && *v > max) {
    ErrorAt(key, "must be at most " + FormatMilli(max) + ", got " + FormatMilli(*v));
    return std::nullopt;
  }
  return v;
}

std::optional<MiB> YamlMap::Memory(std::string_view key, Need need) {
  return Quantity<MiB>(*this, Scalar(key, need, "a memory size such as 80Gi"), key, &ParseMemory);
}

std::optional<Millis> YamlMap::Duration(std::string_view key, Need need) {
  return Quantity<Millis>(*this, Scalar(key, need, "a duration such as 30s or 2h"), key,
                          &ParseDuration);
}

std::optional<Mbps> YamlMap::Bandwidth(std::string_view key, Need need) {
  return Quantity<Mbps>(*this, Scalar(key, need, "a bandwidth such as 400Gbps"), key,
                        &ParseBandwidth);
}

std::optional<std::string> YamlMap::Enum(std::string_view key,
                                         std::vector<std::string_view> allowed, Need need) {
  std::string choices = JoinNames(allowed);
  auto s = Scalar(key, need, "one of " + choices);
  if (!s) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *s) != allowed.end()) return s;
  std::string hint = ClosestMatch(*s, allowed);
  ErrorAt(key, "expected one of " + choices + ", got \"" + *s + "\"" +
                   (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
  return std::nullopt;
}

std::vector<std::string> YamlMap::StrList(std::string_view key, Need need) {
  std::vector<std::string> out;
  auto n = Node(key, need);
  if (!n) return out;
  FieldPath p = path_.Field(key);
  if (n->IsScalar()) {
    out.push_back(n->Scalar());
    return out;
  }
  if (!n->IsSequence()) {
    b_.ErrorAt(p, PosOf(file_, *n), "expected a list of names, got " + Describe(*n));
    return out;
  }
  for (size_t i = 0; i < n->size(); ++i) {
    FieldPath ip = p.Index(i);
    b_.Record(ip, PosOf(file_, (*n)[i]));
    if (auto s = ScalarOf(b_, file_, (*n)[i], ip, "a name")) out.push_back(*s);
  }
  return out;
}

std::map<std::string, std::string> YamlMap::Labels(std::string_view key) {
  std::map<std::string, std::string> out;
  auto n = Node(key, Need::kOptional);
  if (!n) return out;
  FieldPath p = path_.Field(key);
  if (!n->IsMap()) {
    b_.ErrorAt(p, PosOf(file_, *n),
               "expected a mapping of label names to values, got " + Describe(*n));
    return out;
  }
  for (auto it = n->begin(); it != n->end(); ++it) {
    auto k = ScalarOf(b_, file_, it->first, p, "a label name");
    auto v = ScalarOf(b_, file_, it->second, p.Field(k.value_or("?")), "a label value");
    if (k && v) out[*k] = *v;
  }
  return out;
}

void YamlMap::List(std::string_view key, Need need,
                   const std::function<void(const YAML::Node&, const FieldPath&, size_t)>& item) {
  List(key, need, 0, item);
}

void YamlMap::List(std::string_view key, Need need, size_t merged_offset,
                   const std::function<void(const YAML::Node&, const FieldPath&, size_t)>& item) {
  auto n = Node(key, need);
  if (!n) return;
  FieldPath p = path_.Field(key);
  if (!n->IsSequence()) {
    b_.ErrorAt(p, PosOf(file_, *n), "expected a list, got " + Describe(*n));
    return;
  }
  for (size_t i = 0; i < n->size(); ++i) {
    FieldPath ip = p.Index(i, merged_offset + i);
    b_.Record(ip, PosOf(file_, (*n)[i]));
    item((*n)[i], ip, merged_offset + i);
  }
}

void YamlMap::Entries(
    std::string_view key,
    const std::function<void(const std::string&, const YAML::Node&, const FieldPath&)>& item) {
  auto n = Node(key, Need::kOptional);
  if (!n) return;
  FieldPath p = path_.Field(key);
  if (!n->IsMap()) {
    b_.ErrorAt(p, PosOf(file_, *n), "expected a mapping, got " + Describe(*n));
    return;
  }
  std::set<std::string, std::less<>> seen;
  for (auto it = n->begin(); it != n->end(); ++it) {
    auto k = ScalarOf(b_, file_, it->first, p, "a name");
    if (!k) continue;
    FieldPath kp = p.Field(*k);
    if (!seen.insert(*k).second) {
      b_.ErrorAt(kp, PosOf(file_, it->first), "duplicate key \"" + *k + "\"");
      continue;
    }
    b_.Record(kp, PosOf(file_, it->second.IsNull() ? it->first : it->second));
    item(*k, it->second, kp);
  }
}

void YamlMap::Finish() {
  finished_ = true;
  if (!ok_) return;
  std::vector<std::string_view> candidates(known_.begin(), known_.end());
  for (const Entry& e : entries_) {
    const std::string& key = e.key;
    if (known_.count(key)) continue;
    std::string hint = ClosestMatch(key, candidates);
    b_.ErrorAt(path_.Field(key), PosOf(file_, e.key_node),
               "unknown field \"" + key + "\" in " + what_ +
                   (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") +
                   "; expected one of " + JoinNames(candidates));
  }
}

}  // namespace tessera::config_internal
