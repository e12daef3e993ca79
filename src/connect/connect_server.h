// ConnectServer: `sluice connect`, the Spark Connect server (docs/pyspark.md).
//
//   sluice connect --port 15002 --warehouse DIR [--host 127.0.0.1]
//
// Serves spark.connect.SparkConnectService (connect/connect_service.h) over gRPC without TLS on
// host:port; the host is loopback by default, so only this machine's clients reach it. Port 0
// picks a free port. Once listening it prints one line, "sluice connect: listening on
// HOST:PORT" (tests read the port from it), and serves until SIGINT or SIGTERM, then stops
// (in-flight calls get a few seconds to finish) and exits 0.
//
// Ownership: Start returns the owner; Shutdown (or the destructor) stops the server.
// Thread safety: Start/Shutdown/Wait from one thread; gRPC runs the calls on its own threads.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"

namespace grpc {
class Server;
}

namespace sluice::connect {

class ConnectService;

struct ConnectServerOptions {
  std::string host = "127.0.0.1";       // the address bound; loopback only by default
  int port = 15002;                     // Spark Connect's default; 0 picks a free one
  std::string warehouse = "warehouse";  // where table names resolve (created when missing)
  // The Python of foreachBatch workers; empty: $PYSPARK_PYTHON, else $VIRTUAL_ENV/bin/python,
  // else python3 (connect/foreach_batch.h WorkerPython).
  std::string python;
};

class ConnectServer {
 public:
  static Result<std::unique_ptr<ConnectServer>> Start(const ConnectServerOptions& options);
  ~ConnectServer();

  // The port bound (the one picked when options.port was 0).
  int port() const { return port_; }
  // Stops accepting calls and waits (at most 5 s) for the running ones.
  void Shutdown();

 private:
  ConnectServer() = default;
  std::unique_ptr<ConnectService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// The `sluice connect` command: Start, print the listening line, serve until SIGINT/SIGTERM.
// Returns the process exit code (1 with "Error: ..." on stderr when the server cannot start).
int RunConnectCommand(const ConnectServerOptions& options);

}  // namespace sluice::connect
