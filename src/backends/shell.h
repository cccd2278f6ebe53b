// Running a shell command and reading its output, for the backends' host tools (nvidia-smi,
// npu-smi) and Slurm's commands.
#pragma once

#include <string>

namespace tessera {

// The output of a shell command ("" and false when it could not run or failed).
bool RunCommand(const std::string& command, std::string* output);

}  // namespace tessera
