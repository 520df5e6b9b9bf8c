// graphsieve-build's main, as a function: flags → BuildOptions → the build
// job (core/offline), under mpirun one rank of the distributed build. main.cc
// passes no ObserverWrap; a test-only build of the same main passes one that
// adds a fault (tests/distributed/CMakeLists.txt).
#ifndef GRAPHSIEVE_BUILDER_BUILD_MAIN_H_
#define GRAPHSIEVE_BUILDER_BUILD_MAIN_H_

#include <functional>

#include "core/offline/build_job.h"

namespace graphsieve {

// Given the terminal-progress observer and this process's rank (0 without
// mpirun), returns the observer the build runs with.
using ObserverWrap = std::function<BuildObserver(BuildObserver observer, int rank)>;

// The process's exit code (see build_main.cc). `wrap` may be empty.
int BuildMain(int argc, char** argv, const ObserverWrap& wrap);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_BUILDER_BUILD_MAIN_H_
