// The tessera command. All the work is in the tessera_cli library so tests can call it.
#include "cli/app.h"

int main(int argc, char** argv) {
  return tessera::cli::Main(argc, argv);
}
