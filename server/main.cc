// graphsieve-server (server_main.h).
#include "server/server_main.h"

int main(int argc, char** argv) {
  return graphsieve::ServerMain(argc, argv, [](const graphsieve::ServerOptions& o) {
    return graphsieve::GraphsieveServer::Create(o);
  });
}
