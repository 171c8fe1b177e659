//===- StandaloneMain.cpp - Run a fuzz target without libFuzzer -----------===//
//
// A bounded, deterministic stand-in for libFuzzer's driver, so that CI runs
// every fuzz target under the sanitizers in seconds and a failure reproduces
// exactly:
//
//   fuzz-<target> [-runs=N] [-seed=S] [-max_len=L] [-timeout=SEC]
//                 [-artifact_prefix=P] CORPUS_DIR_OR_FILE...
//
// It runs every corpus input once, then N mutants: each starts from a corpus
// input (or, half of the time, the previous mutant) and applies 1-4 byte
// edits drawn from a SplitMix64 stream seeded with S. The flags are spelled
// as libFuzzer's, so one command line works with either driver. An input
// that crashes, trips a sanitizer or exceeds -timeout is written to
// P + "crash-<iteration>" (or "timeout-<iteration>") before the process dies.
//
//===----------------------------------------------------------------------===//
#include "FuzzTarget.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

// Present only in sanitized builds: called before a sanitizer report exits.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void))
    __attribute__((weak));

namespace {

using Bytes = std::vector<uint8_t>;

// The input being run, for the crash handlers (which may only use
// async-signal-safe calls: open, write, _exit).
const Bytes *gCurrent = nullptr;
char gArtifactPath[4096];

void saveCurrentInput(const char *kind) {
  static bool saved = false;
  if (saved || !gCurrent)
    return;
  saved = true;
  char path[4200];
  size_t n = strlen(gArtifactPath);
  memcpy(path, gArtifactPath, n);
  path[n] = '\0';
  strncat(path, kind, sizeof(path) - n - 1);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return;
  if (!gCurrent->empty() &&
      write(fd, gCurrent->data(), gCurrent->size()) < 0) {
    // Nothing more to do from a dying process.
  }
  close(fd);
  const char msg[] = "fuzz: the failing input was written to ";
  if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, path, strlen(path)) < 0 ||
      write(2, "\n", 1) < 0) {
  }
}

void onDeath() { saveCurrentInput("crash"); }

void onSignal(int sig) {
  saveCurrentInput(sig == SIGALRM ? "timeout" : "crash");
  if (sig == SIGALRM) {
    const char msg[] = "fuzz: an input ran past -timeout\n";
    if (write(2, msg, sizeof(msg) - 1) < 0) {
    }
    _exit(70);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

// Text the parsers treat specially: structure and boundary integers.
const char *const kTokens[] = {
    "0",          "-1",         "1",          "2147483647", "2147483648",
    "-2147483648", "4294967296", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "65535", "65536", "1e308",
    "-0",         "0.5",        "\"",         "'",          "(",          ")",
    ",",          "[",          "]",          "{",          "}",          ":",
    "null",       "true",       "\\u0000",    "\\ud800",    "cdiv(",      "*",
    "/",          "-",          "+",          "T",          "NUM_DOCS",   "NB",
};

void mutateOnce(Bytes &d, SplitMix64 &rng, const std::vector<Bytes> &corpus) {
  switch (rng.below(9)) {
  case 0: // flip a bit
    if (!d.empty())
      d[rng.below(d.size())] ^= static_cast<uint8_t>(1u << rng.below(8));
    break;
  case 1: // a random byte
    if (!d.empty())
      d[rng.below(d.size())] = static_cast<uint8_t>(rng.next());
    break;
  case 2: { // insert 1-8 random bytes
    size_t at = rng.below(d.size() + 1), n = 1 + rng.below(8);
    for (size_t i = 0; i < n; ++i)
      d.insert(d.begin() + static_cast<std::ptrdiff_t>(at),
               static_cast<uint8_t>(rng.next()));
    break;
  }
  case 3: { // erase a range
    if (d.empty())
      break;
    size_t at = rng.below(d.size());
    size_t n = 1 + rng.below(std::min<size_t>(16, d.size() - at));
    d.erase(d.begin() + static_cast<std::ptrdiff_t>(at),
            d.begin() + static_cast<std::ptrdiff_t>(at + n));
    break;
  }
  case 4: { // duplicate a range elsewhere
    if (d.empty())
      break;
    size_t from = rng.below(d.size());
    size_t n = 1 + rng.below(std::min<size_t>(32, d.size() - from));
    Bytes piece(d.begin() + static_cast<std::ptrdiff_t>(from),
                d.begin() + static_cast<std::ptrdiff_t>(from + n));
    size_t at = rng.below(d.size() + 1);
    d.insert(d.begin() + static_cast<std::ptrdiff_t>(at), piece.begin(),
             piece.end());
    break;
  }
  case 5: { // splice: our head, another input's tail
    const Bytes &other = corpus[rng.below(corpus.size())];
    size_t cut = rng.below(d.size() + 1), from = rng.below(other.size() + 1);
    d.resize(cut);
    d.insert(d.end(), other.begin() + static_cast<std::ptrdiff_t>(from),
             other.end());
    break;
  }
  case 6: { // overwrite a byte range with a token
    const char *t = kTokens[rng.below(sizeof(kTokens) / sizeof(kTokens[0]))];
    size_t len = strlen(t), at = rng.below(d.size() + 1);
    size_t replace = std::min(d.size() - at, rng.below(len + 2));
    d.erase(d.begin() + static_cast<std::ptrdiff_t>(at),
            d.begin() + static_cast<std::ptrdiff_t>(at + replace));
    d.insert(d.begin() + static_cast<std::ptrdiff_t>(at), t, t + len);
    break;
  }
  case 7: { // a boundary integer in little-endian binary (headers, structs)
    static const uint64_t kValues[] = {0,          1,          0x7f,
                                       0x80,       0xff,       0x7fff,
                                       0xffff,     0x7fffffff, 0x80000000,
                                       0xffffffff, ~0ull,      1ull << 63};
    uint64_t v = kValues[rng.below(sizeof(kValues) / sizeof(kValues[0]))];
    size_t width = size_t{1} << rng.below(4); // 1, 2, 4 or 8 bytes
    if (d.size() < width)
      break;
    size_t at = rng.below(d.size() - width + 1);
    for (size_t i = 0; i < width; ++i)
      d[at + i] = static_cast<uint8_t>(v >> (8 * i));
    break;
  }
  case 8: // truncate
    d.resize(rng.below(d.size() + 1));
    break;
  }
}

bool readFile(const std::string &path, Bytes &out) {
  FILE *f = fopen(path.c_str(), "rb");
  if (!f)
    return false;
  out.clear();
  uint8_t buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    out.insert(out.end(), buf, buf + n);
  fclose(f);
  return true;
}

// Files of a directory (sorted, for a deterministic order) or the file itself.
bool collect(const std::string &path, std::vector<std::string> &files) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return false;
  if (!S_ISDIR(st.st_mode)) {
    files.push_back(path);
    return true;
  }
  DIR *dir = opendir(path.c_str());
  if (!dir)
    return false;
  std::vector<std::string> found;
  while (dirent *e = readdir(dir))
    if (e->d_name[0] != '.')
      found.push_back(path + "/" + e->d_name);
  closedir(dir);
  std::sort(found.begin(), found.end());
  files.insert(files.end(), found.begin(), found.end());
  return true;
}

bool flagValue(const char *arg, const char *name, long long &out) {
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0)
    return false;
  char *end = nullptr;
  out = strtoll(arg + n, &end, 10);
  if (end == arg + n || *end != '\0' || out < 0) {
    fprintf(stderr, "fuzz: bad value in '%s'\n", arg);
    exit(2);
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  long long runs = 10000, seed = 1, maxLen = 1 << 16, timeout = 20;
  std::string prefix = "./";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (flagValue(a, "-runs=", runs) || flagValue(a, "-seed=", seed) ||
        flagValue(a, "-max_len=", maxLen) || flagValue(a, "-timeout=", timeout))
      continue;
    if (!strncmp(a, "-artifact_prefix=", 17)) {
      prefix = a + 17;
      continue;
    }
    if (a[0] == '-') {
      fprintf(stderr, "fuzz: unknown flag '%s' (this is the standalone "
                      "driver; see fuzz/README.md)\n", a);
      return 2;
    }
    if (!collect(a, files)) {
      fprintf(stderr, "fuzz: cannot read '%s'\n", a);
      return 2;
    }
  }
  std::vector<Bytes> corpus;
  for (const std::string &f : files) {
    corpus.emplace_back();
    if (!readFile(f, corpus.back())) {
      fprintf(stderr, "fuzz: cannot read '%s'\n", f.c_str());
      return 2;
    }
  }
  if (corpus.empty())
    corpus.emplace_back(); // mutate from the empty input

  if (__sanitizer_set_death_callback)
    __sanitizer_set_death_callback(onDeath);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM})
    signal(sig, onSignal);

  const std::string name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1
                                                 : argv[0];
  double slowest = 0;
  auto runOne = [&](const Bytes &input, long long iteration) {
    snprintf(gArtifactPath, sizeof gArtifactPath, "%s%lld-", prefix.c_str(),
             iteration);
    gCurrent = &input;
    alarm(static_cast<unsigned>(timeout));
    auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(input.data(), input.size());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
                   .count();
    alarm(0);
    gCurrent = nullptr;
    slowest = std::max(slowest, s);
  };

  long long iteration = 0;
  for (const Bytes &input : corpus)
    runOne(input, iteration++);
  SplitMix64 rng{static_cast<uint64_t>(seed)};
  Bytes mutant = corpus[0];
  for (long long r = 0; r < runs; ++r) {
    if (rng.below(2) == 0)
      mutant = corpus[rng.below(corpus.size())];
    for (size_t edits = 1 + rng.below(4); edits > 0; --edits)
      mutateOnce(mutant, rng, corpus);
    if (mutant.size() > static_cast<size_t>(maxLen))
      mutant.resize(static_cast<size_t>(maxLen));
    runOne(mutant, iteration++);
  }
  printf("%s: %zu corpus inputs and %lld mutants (seed %lld) ran without a "
         "crash; slowest input %.3f s\n",
         name.c_str(), files.size(), runs, seed, slowest);
  return 0;
}
