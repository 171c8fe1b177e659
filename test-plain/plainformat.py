"""The lit test format of test-plain/: the tests of test/ that run without the
MLIR tools. In a module of its own (not lit.cfg.py) so that lit can pickle it
for its worker processes."""
import re

import lit.formats
import lit.Test

# A RUN line naming one of these needs the MLIR half of the build.
COMPILER_ONLY = re.compile(
    r"\b(flamia-opt|flamia-compile|flamia-interp|mlir-[a-z-]+|llc|FlamiaDialectDocGen)\b"
    r"|%flamia_obj_root/dialects|%examples")


# AddressSanitizer reserves terabytes of address space for its shadow memory
# at start-up, so a process under `ulimit -v` cannot even start.
ADDRESS_SPACE_LIMIT = re.compile(r"RUN:.*\bulimit\s+(-\S*\s+)*-v")


def needs_compiler(path):
    with open(path, errors="replace") as f:
        return any("RUN:" in line and COMPILER_ONLY.search(line) for line in f)


class PlainShTest(lit.formats.ShTest):
    """ShTest over the tests that use only the plain tools."""

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        for test in super().getTestsInDirectory(
                testSuite, path_in_suite, litConfig, localConfig):
            if not needs_compiler(test.getSourcePath()):
                yield test

    def execute(self, test, litConfig):
        if "sanitizers" in test.config.available_features:
            with open(test.getSourcePath(), errors="replace") as f:
                if ADDRESS_SPACE_LIMIT.search(f.read()):
                    return lit.Test.Result(
                        lit.Test.UNSUPPORTED,
                        "uses `ulimit -v`, which AddressSanitizer cannot run under")
        return super().execute(test, litConfig)
