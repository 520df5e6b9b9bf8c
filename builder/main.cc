// graphsieve-build (build_main.h).
#include "builder/build_main.h"

int main(int argc, char** argv) { return graphsieve::BuildMain(argc, argv, {}); }
