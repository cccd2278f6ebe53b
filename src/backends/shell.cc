#include "backends/shell.h"

#include <array>
#include <cstdio>

namespace tessera {

bool RunCommand(const std::string& command, std::string* output) {
  output->clear();
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return false;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    output->append(buf.data(), n);
  return pclose(p) == 0;
}

}  // namespace tessera
