#include "model/run_as.h"

namespace tessera {

bool ValidHostAccountName(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool lower = (c >= 'a' && c <= 'z') || c == '_';
    const bool rest = lower || (c >= '0' && c <= '9') || c == '.' || c == '-';
    const bool dollar = c == '$' && i + 1 == name.size() && i > 0;
    if (!(i == 0 ? lower : rest || dollar)) return false;
  }
  return true;
}

}  // namespace tessera
