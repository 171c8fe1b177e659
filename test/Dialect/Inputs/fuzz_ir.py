"""Feeds flamia-opt truncated and mutated IR; every run must end with a
diagnostic (exit 1 and an 'error:' line) or succeed (exit 0), never a crash.

usage: fuzz_ir.py FLAMIA_OPT FILE... [--seed N] [--mutations N] [--pass P]...

With --pass (repeatable; e.g. --pass=--flamia-graph-pipeline), every mutated
input that parses and verifies is also run through each pass pipeline P, so
that the passes see IR with odd shapes, attributes and numbers, not only the
parser. Deterministic: the same seed gives the same cases.
"""
import os
import random
import re
import subprocess
import sys

SYNTAX = list("<>(){}[],:=%!#@?x\"0123456789") + ["f8E4M3FN", "1x32", "32x32", "tensor",
          "qtensor", "safe_block", "-1", "0", "?", "", "bf16", "flamia.", "packed"]


# Integers that make parseable but unusual IR: zero, negative, past 32 bits.
NUMBERS = ["0", "1", "-1", "3", "7", "31", "33", "96", "129", "255", "65536",
           "2147483647", "2147483648", "4294967296", "-2147483648"]


# A case that takes longer than this is a hang (every valid case takes well
# under a second).
TIMEOUT = 20


def run(opt, text, extra=()):
    try:
        p = subprocess.run([opt, "-", "-o", "/dev/null", *extra], input=text.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"hang: no answer in {TIMEOUT} s", False
    err = p.stderr.decode(errors="replace")
    if p.returncode == 0:
        return None, True
    if p.returncode == 1 and "error:" in err and "Stack dump" not in err:
        return None, False
    return f"exit {p.returncode}: {err[-2000:]}", False


def main():
    args = sys.argv[1:]
    seed, mutations = 0, 40
    passes = [a.split("=", 1)[1] for a in args if a.startswith("--pass=")]
    args = [a for a in args if not a.startswith("--pass=")]
    if "--seed" in args:
        i = args.index("--seed"); seed = int(args[i + 1]); del args[i:i + 2]
    if "--mutations" in args:
        i = args.index("--mutations"); mutations = int(args[i + 1]); del args[i:i + 2]
    opt, files = args[0], args[1:]
    rng = random.Random(seed)
    runs = failures = 0
    for path in files:
        text = open(path).read()
        cases = []
        for k in range(1, 31):  # truncations
            cases.append(("truncate@%d" % (len(text) * k // 31), text[: len(text) * k // 31]))
        for _ in range(mutations):  # token-level mutations
            pos = rng.randrange(len(text))
            end = min(len(text), pos + rng.randrange(1, 12))
            cases.append(("mutate@%d" % pos, text[:pos] + rng.choice(SYNTAX) + text[end:]))
        numbers = [m for m in re.finditer(r"(?<![\w.%#^])\d+(?![\w.])", text)]
        for _ in range(mutations if numbers else 0):  # integer replacements
            m = rng.choice(numbers)
            cases.append(("number@%d" % m.start(),
                          text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]))
        for name, case in cases:
            runs += 1
            problem, parsed = run(opt, case)
            for pipeline in passes if parsed else []:
                runs += 1
                problem, _ = run(opt, case, pipeline.split())
                if problem:
                    name += " " + pipeline
                    break
            if problem:
                failures += 1
                print(f"CRASH {path} {name}: {problem}")
                if os.environ.get("FUZZ_IR_SAVE"):
                    with open(f"{os.environ['FUZZ_IR_SAVE']}/case{failures}.mlir", "w") as f:
                        f.write(case)
    print(f"fuzz: {runs} runs, {failures} crashes")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
