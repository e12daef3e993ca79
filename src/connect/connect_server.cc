#include "connect/connect_server.h"

#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "connect/connect_service.h"

namespace sluice::connect {

Result<std::unique_ptr<ConnectServer>> ConnectServer::Start(const ConnectServerOptions& options) {
  if (options.port < 0 || options.port > 65535) {
    return Status::InvalidArgument("connect: --port " + std::to_string(options.port) +
                                   " is not a port (0-65535)");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.warehouse, ec);
  if (ec) {
    return Status::IOError("connect: cannot create the warehouse " + options.warehouse + ": " +
                           ec.message());
  }
  std::unique_ptr<ConnectServer> server(new ConnectServer());
  server->service_ = std::make_unique<ConnectService>(options.warehouse);
  grpc::ServerBuilder builder;
  std::string address = options.host + ":" + std::to_string(options.port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &server->port_);
  builder.RegisterService(server->service_.get());
  // Results are sent in Arrow batches of kRowsPerArrowBatch rows; plans can be large.
  builder.SetMaxReceiveMessageSize(128 * 1024 * 1024);
  builder.SetMaxSendMessageSize(128 * 1024 * 1024);
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) {
    return Status::IOError("connect: cannot listen on " + address +
                           " (in use, or not an address of this machine)");
  }
  // foreachBatch workers connect back here, as clients on this machine.
  std::string host = options.host;
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") host = "127.0.0.1";
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  PythonWorkerConfig workers;
  workers.connect_url = "sc://" + host + ":" + std::to_string(server->port_) + "/";
  workers.python = options.python;
  server->service_->SetWorkerConfig(std::move(workers));
  return server;
}

ConnectServer::~ConnectServer() { Shutdown(); }

void ConnectServer::Shutdown() {
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    server_->Wait();
    server_.reset();
  }
}

int RunConnectCommand(const ConnectServerOptions& options) {
  // SIGINT and SIGTERM are taken by sigwait below, on this thread only: block them before gRPC
  // starts its threads, which inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Result<std::unique_ptr<ConnectServer>> server = ConnectServer::Start(options);
  if (!server.ok()) {
    std::cerr << "Error: " << server.status().message() << std::endl;
    return 1;
  }
  std::cout << "sluice connect: listening on " << options.host << ":" << (*server)->port()
            << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  std::cout << "sluice connect: stopping (signal " << received << ")" << std::endl;
  (*server)->Shutdown();
  return 0;
}

}  // namespace sluice::connect
