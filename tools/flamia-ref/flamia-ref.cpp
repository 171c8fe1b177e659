//===- flamia-ref.cpp - FLAMIA's CPU reference tool -------------*- C++ -*-===//
//
// flamia-ref SUBCOMMAND [options]: the executable definition of the numerics
// contract (docs/numerics.md) on .npy files. See `flamia-ref help`.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "CommandLine.h"

#include "flamia/Support/Version.h"

#include <cstdio>
#include <cstring>

using namespace flamia::ref;

static void printUsage(FILE *to) {
  std::fprintf(to, "usage: flamia-ref SUBCOMMAND [options]\n\nsubcommands:\n");
  for (const Command *c = commands(); c->name; ++c)
    std::fprintf(to, "  %-10s %s\n", c->name, c->summary);
  std::fprintf(to, "\n`flamia-ref SUBCOMMAND --help` describes one; "
                   "`flamia-ref --version` prints the version.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    printUsage(stderr);
    return kExitBadInput;
  }
  if (!std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help") ||
      !std::strcmp(argv[1], "-h")) {
    printUsage(stdout);
    return 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("flamia-ref %s\n", flamia::versionBanner());
    return 0;
  }
  for (const Command *c = commands(); c->name; ++c)
    if (!std::strcmp(argv[1], c->name))
      return c->run(argc - 1, argv + 1);
  std::fprintf(stderr, "flamia-ref: unknown subcommand '%s'\n", argv[1]);
  printUsage(stderr);
  return kExitBadInput;
}
