// Runs rooflab::microbench::characterize() and writes machine.json (stdout or a file):
//   microbench_characterize [quick|paper|tiny] [out.json] [--threads N] [--no-likwid]
// Timing runs on a shared machine must hold the lock: flock /tmp/rooflab-timing.lock ...
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "harness/error.hpp"
#include "microbench/characterize.hpp"

int main(int argc, char** argv) {
  rooflab::microbench::CharacterizeOptions o;
  std::string out;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-likwid")) {
      o.likwid = false;
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      o.max_threads = std::stoi(argv[++i]);
    } else if (positional++ == 0) {
      o.profile = argv[i];
    } else {
      out = argv[i];
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  o.progress = [t0](const std::string& s) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "[characterize %6.1f s] %s\n", t, s.c_str());
  };
  try {
    const auto j = rooflab::microbench::characterize(o);
    if (out.empty()) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::ofstream(out) << j.dump(2) << "\n";
      std::cerr << "wrote " << out << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "microbench_characterize: " << e.what() << "\n";
    return 1;
  }
}
