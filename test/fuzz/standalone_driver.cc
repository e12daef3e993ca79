// A libFuzzer-compatible driver for compilers without -fsanitize=fuzzer (g++): it links with a
// target's LLVMFuzzerTestOneInput and runs
//   1. every file of the corpus directories (and every file given directly),
//   2. every prefix of each (a torn tail is the commonest damage of the files these parse),
//   3. random mutations of the corpus (bit flips, byte sets, inserts, deletes, duplicated ranges,
//      splices of two inputs, tokens taken from the corpus) until -runs or -max_total_time.
// There is no coverage feedback: it finds what blind mutation of good inputs finds, which is much
// less than libFuzzer; with clang, `make fuzz` builds the real libFuzzer targets instead.
//
// Usage (a subset of libFuzzer's flags, same spelling):
//   <fuzzer> [-max_total_time=S] [-runs=N] [-seed=N] [-max_len=N] [-artifact_prefix=P] PATH...
// Defaults: -max_total_time=0 and -runs=0 mean corpus and prefixes only; -seed=0 takes the clock.
// Exit status: 0 when every input returned; 2 for bad arguments or an empty corpus (a run that
// tested nothing must not pass). A target that crashes or aborts ends the process; the input is
// first written to <artifact_prefix>crash-<run> and the seed and run number printed, so that
// `<fuzzer> -seed=S -runs=R PATH...` reproduces it, and `<fuzzer> crash-<run>` replays it.
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input being run, for the crash handler (written before every run; read only there).
std::string g_current;
char g_artifact[4096] = "crash";
uint64_t g_seed = 0;
uint64_t g_run = 0;

void WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void OnCrash(int sig) {
  // Only async-signal-safe calls: open/write/close, no allocation.
  int fd = ::open(g_artifact, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    WriteAll(fd, g_current.data(), g_current.size());
    ::close(fd);
  }
  char line[256];
  int n = std::snprintf(line, sizeof line,
                        "standalone fuzz driver: signal %d at run %llu (seed %llu); input written "
                        "to %s\n",
                        sig, static_cast<unsigned long long>(g_run),
                        static_cast<unsigned long long>(g_seed), g_artifact);
  if (n > 0) WriteAll(2, line, static_cast<size_t>(n));
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

bool ReadFile(const std::filesystem::path& p, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

void RunOne(const std::string& input, const std::string& prefix) {
  g_current = input;
  ++g_run;
  std::snprintf(g_artifact, sizeof g_artifact, "%scrash-%llu", prefix.c_str(),
                static_cast<unsigned long long>(g_run));
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

class Mutator {
 public:
  Mutator(uint64_t seed, const std::vector<std::string>& corpus, size_t max_len)
      : rng_(seed), corpus_(corpus), max_len_(max_len) {}

  std::string Next() {
    std::string s = corpus_[Pick(corpus_.size())];
    int edits = 1 + static_cast<int>(Pick(4));
    for (int i = 0; i < edits; ++i) Mutate(&s);
    if (s.size() > max_len_) s.resize(max_len_);
    return s;
  }

 private:
  size_t Pick(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }
  char Interesting() {
    static const char kBytes[] = {'\0', '\n', '\r', '"',  '\\',   '{',    '}',    '[',   ']',
                                  ',',  ':',  ';',  '\'', '`',    '-',    '0',    '9',   'v',
                                  ' ',  '(',  ')',  '.',  '\x7f', '\xff', '\xc3', '\x80'};
    return kBytes[Pick(sizeof kBytes)];
  }
  void Mutate(std::string* s) {
    switch (Pick(9)) {
      case 0:  // flip a bit
        if (!s->empty()) (*s)[Pick(s->size())] ^= static_cast<char>(1 << Pick(8));
        break;
      case 1:  // set a byte to an interesting one
        if (!s->empty()) (*s)[Pick(s->size())] = Interesting();
        break;
      case 2:  // insert bytes
        s->insert(Pick(s->size() + 1), std::string(1 + Pick(3), Interesting()));
        break;
      case 3: {  // delete a range
        if (s->empty()) break;
        size_t at = Pick(s->size());
        s->erase(at, 1 + Pick(std::min<size_t>(16, s->size() - at)));
        break;
      }
      case 4: {  // duplicate a range
        if (s->empty()) break;
        size_t at = Pick(s->size());
        std::string piece = s->substr(at, 1 + Pick(32));
        s->insert(Pick(s->size() + 1), piece);
        break;
      }
      case 5: {  // splice: a prefix of this one and a suffix of another
        const std::string& other = corpus_[Pick(corpus_.size())];
        *s = s->substr(0, Pick(s->size() + 1)) + other.substr(Pick(other.size() + 1));
        break;
      }
      case 6: {  // a token (a run of a few bytes) from another input, inserted
        const std::string& other = corpus_[Pick(corpus_.size())];
        if (other.empty()) break;
        size_t at = Pick(other.size());
        s->insert(Pick(s->size() + 1), other.substr(at, 1 + Pick(12)));
        break;
      }
      case 7:  // truncate
        s->resize(Pick(s->size() + 1));
        break;
      default: {  // replace a digit run with an extreme number
        static const char* kNumbers[] = {"0",
                                         "-1",
                                         "9223372036854775807",
                                         "9223372036854775808",
                                         "-9223372036854775808",
                                         "1e309",
                                         "99999999999999999999",
                                         "0.5",
                                         "-0"};
        size_t at = s->find_first_of("0123456789");
        if (at == std::string::npos) break;
        size_t end = s->find_first_not_of("0123456789", at);
        s->replace(at, (end == std::string::npos ? s->size() : end) - at,
                   kNumbers[Pick(sizeof kNumbers / sizeof kNumbers[0])]);
        break;
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<std::string>& corpus_;
  size_t max_len_;
};

bool Flag(const char* arg, const char* name, std::string* value) {
  size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  double max_total_time = 0;
  uint64_t runs = 0;
  uint64_t seed = 0;
  size_t max_len = 1 << 16;
  std::string prefix;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    try {
      if (Flag(argv[i], "-max_total_time", &v)) {
        max_total_time = std::stod(v);
      } else if (Flag(argv[i], "-runs", &v)) {
        runs = std::stoull(v);
      } else if (Flag(argv[i], "-seed", &v)) {
        seed = std::stoull(v);
      } else if (Flag(argv[i], "-max_len", &v)) {
        max_len = std::stoull(v);
      } else if (Flag(argv[i], "-artifact_prefix", &v)) {
        prefix = v;
      } else if (argv[i][0] == '-') {
        std::fprintf(stderr, "standalone fuzz driver: unknown flag %s\n", argv[i]);
        return 2;
      } else {
        paths.push_back(argv[i]);
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "standalone fuzz driver: bad value in %s\n", argv[i]);
      return 2;
    }
  }
  std::vector<std::string> corpus;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());  // a fixed order: runs are reproducible
      for (const auto& f : files) {
        std::string text;
        if (ReadFile(f, &text)) corpus.push_back(std::move(text));
      }
    } else {
      std::string text;
      if (!ReadFile(p, &text)) {
        std::fprintf(stderr, "standalone fuzz driver: cannot read %s\n", p.c_str());
        return 2;
      }
      corpus.push_back(std::move(text));
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "standalone fuzz driver: no inputs in the given paths\n");
    return 2;
  }
  if (seed == 0) {
    seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  }
  g_seed = seed;
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, OnCrash);

  const auto start = std::chrono::steady_clock::now();
  uint64_t prefixes = 0;
  for (const std::string& input : corpus) {
    RunOne(input, prefix);
    // Every prefix of a small input; a bounded sample of a large one's.
    size_t step = std::max<size_t>(1, input.size() / 4096);
    for (size_t cut = 0; cut < input.size(); cut += step, ++prefixes) {
      RunOne(input.substr(0, cut), prefix);
    }
  }
  uint64_t mutations = 0;
  Mutator mutator(seed, corpus, max_len);
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while ((runs > 0 && mutations < runs) ||
         (runs == 0 && max_total_time > 0 && elapsed() < max_total_time)) {
    if (runs > 0 && max_total_time > 0 && elapsed() >= max_total_time) break;
    RunOne(mutator.Next(), prefix);
    ++mutations;
  }
  std::printf(
      "standalone fuzz driver: %zu inputs, %llu prefixes, %llu mutations (seed %llu) in %.1f s: "
      "no crash\n",
      corpus.size(), static_cast<unsigned long long>(prefixes),
      static_cast<unsigned long long>(mutations), static_cast<unsigned long long>(seed), elapsed());
  return 0;
}
