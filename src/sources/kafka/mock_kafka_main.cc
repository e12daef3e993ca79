// sluice_mock_kafka: the test cluster (sources/kafka/test_cluster.h) as a process, for shell tests
// (crash tests that kill `sluice run` while a broker outlives it; kcat produces into it).
// Without SLUICE_KAFKA_BOOTSTRAP it is librdkafka's mock cluster; with it, it stands for the real
// broker named there: it deletes that broker's topics, creates the named ones, and waits.
//
// Usage: sluice_mock_kafka [--brokers N] <bootstrap file> [topic:partitions ...]
// Creates the topics, writes the bootstrap servers ("127.0.0.1:port,...") to <bootstrap file>
// (atomically, when the cluster is ready) and runs until SIGTERM or SIGINT. N brokers (default
// 1; the mock numbers them 1..N and spreads the partitions' leaders over them).
//
// Faults, for test/faults/fault_harness.py: while it runs it reads commands from standard
// input, one per line, and answers each on standard output with one line, "ok <command>" or
// "error <command>: <why>" (the mock only: on the real broker every command is an error):
//   down                        every broker drops its connections and refuses new ones
//   up                          the brokers accept connections again
//   leader TOPIC PARTITION ID   the partition's leader moves to broker ID
//   rtt MS                      every answer is delayed by MS milliseconds (0: none)
// At the end of its input (a shell's background job has /dev/null) it only waits for a signal.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include "sources/kafka/test_cluster.h"

namespace {
volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

using sluice::sources::kafka::testing::KafkaTestCluster;

// Plays one command line on the cluster; the answer line (without its newline).
std::string Play(KafkaTestCluster& cluster, const std::string& line) {
  std::istringstream in(line);
  std::string verb;
  in >> verb;
  try {
    if (verb == "down") {
      cluster.SetBrokersDown();
    } else if (verb == "up") {
      cluster.SetBrokersUp();
    } else if (verb == "leader") {
      std::string topic;
      int partition = -1;
      int broker = -1;
      if (!(in >> topic >> partition >> broker))
        return "error " + line + ": leader TOPIC PARTITION ID";
      cluster.SetPartitionLeader(topic, partition, broker);
    } else if (verb == "rtt") {
      int ms = -1;
      if (!(in >> ms) || ms < 0) return "error " + line + ": rtt MS (MS >= 0)";
      cluster.SetRoundTripMs(ms);
    } else {
      return "error " + line + ": unknown command (down, up, leader, rtt)";
    }
  } catch (const std::exception& e) {
    return "error " + line + ": " + e.what();
  }
  return "ok " + line;
}

// Reads commands until the end of standard input or a signal.
void ServeCommands(KafkaTestCluster& cluster) {
  char buf[512];
  while (!g_stop) {
    if (std::fgets(buf, sizeof(buf), stdin) == nullptr) {
      if (std::ferror(stdin) && errno == EINTR) {
        std::clearerr(stdin);
        continue;
      }
      return;  // end of input
    }
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.empty()) continue;
    std::printf("%s\n", Play(cluster, line).c_str());
    std::fflush(stdout);
  }
}

int Serve(int argc, char** argv) {
  int first = 1;
  int brokers = 1;
  if (argc > 2 && std::strcmp(argv[1], "--brokers") == 0) {
    brokers = std::atoi(argv[2]);
    first = 3;
  }
  if (brokers < 1 || first >= argc) {
    std::fprintf(stderr, "usage: %s [--brokers N>=1] <bootstrap file> [topic:partitions ...]\n",
                 argv[0]);
    return 2;
  }
  KafkaTestCluster cluster(brokers);
  for (int i = first + 1; i < argc; ++i) {
    std::string spec = argv[i];
    size_t colon = spec.find(':');
    int partitions = colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1);
    cluster.CreateTopic(spec.substr(0, colon), partitions);
  }
  std::string tmp = std::string(argv[first]) + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) {
    std::perror(tmp.c_str());
    return 1;
  }
  std::fprintf(f, "%s\n", cluster.bootstrap().c_str());
  std::fclose(f);
  if (std::rename(tmp.c_str(), argv[first]) != 0) {
    std::perror(argv[first]);
    return 1;
  }
  ServeCommands(cluster);
  while (!g_stop) pause();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s [--brokers N] <bootstrap file> [topic:partitions ...]\n",
                 argv[0]);
    return 2;
  }
  // Without SA_RESTART: a signal ends a blocked read of standard input (EINTR).
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  try {
    return Serve(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}
