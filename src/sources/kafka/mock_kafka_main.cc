// sluice_mock_kafka: the test cluster (sources/kafka/test_cluster.h) as a process, for shell tests
// (crash tests that kill `sluice run` while a broker outlives it; kcat produces into it).
// Without SLUICE_KAFKA_BOOTSTRAP it is librdkafka's mock cluster; with it, it stands for the real
// broker named there: it deletes that broker's topics, creates the named ones, and waits.
//
// Usage: sluice_mock_kafka <bootstrap file> [topic:partitions ...]
// Creates the topics, writes the bootstrap servers ("127.0.0.1:port,...") to <bootstrap file>
// (atomically, when the cluster is ready) and runs until SIGTERM or SIGINT.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "sources/kafka/test_cluster.h"

namespace {
volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

int Serve(int argc, char** argv) {
  sluice::sources::kafka::testing::KafkaTestCluster cluster;
  for (int i = 2; i < argc; ++i) {
    std::string spec = argv[i];
    size_t colon = spec.find(':');
    int partitions = colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1);
    cluster.CreateTopic(spec.substr(0, colon), partitions);
  }
  std::string tmp = std::string(argv[1]) + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) {
    std::perror(tmp.c_str());
    return 1;
  }
  std::fprintf(f, "%s\n", cluster.bootstrap().c_str());
  std::fclose(f);
  if (std::rename(tmp.c_str(), argv[1]) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  while (!g_stop) pause();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <bootstrap file> [topic:partitions ...]\n", argv[0]);
    return 2;
  }
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  try {
    return Serve(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}
