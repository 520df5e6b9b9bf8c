// graphsieve-server-testing: graphsieve-server's main (server/server_main.h)
// with GetSamplingRate calls tagged with kHoldMetadataKey held until the
// drain begins (server_test_access.h). Built only with the tests.
#include "server/server_main.h"
#include "tests/server/server_test_access.h"

int main(int argc, char** argv) {
  return graphsieve::ServerMain(argc, argv, [](const graphsieve::ServerOptions& o) {
    return graphsieve::GraphsieveServerTestAccess::CreateHoldingTaggedCalls(o);
  });
}
