// `rooflab sinkhorn` as a stand-alone test helper: the POT comparison drives the very
// solve_main the CLI wires in, without depending on the rest of the CLI.
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "kernels/sinkhorn/solve.hpp"

int main(int argc, char** argv) {
  return rooflab::sinkhorn::solve_main(std::vector<std::string>(argv + 1, argv + argc));
}
