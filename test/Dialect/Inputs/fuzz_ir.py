"""Feeds flamia-opt truncated and mutated IR; every run must end with a
diagnostic (exit 1 and an 'error:' line) or succeed (exit 0), never a crash.

usage: fuzz_ir.py FLAMIA_OPT FILE... [--seed N] [--mutations N]
"""
import random
import subprocess
import sys

SYNTAX = list("<>(){}[],:=%!#@?x\"0123456789") + ["f8E4M3FN", "1x32", "32x32", "tensor",
          "qtensor", "safe_block", "-1", "0", "?", "", "bf16", "flamia.", "packed"]


def run(opt, text):
    p = subprocess.run([opt, "-", "-o", "/dev/null"], input=text.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode(errors="replace")
    if p.returncode == 0:
        return None
    if p.returncode == 1 and "error:" in err and "Stack dump" not in err:
        return None
    return f"exit {p.returncode}: {err[-2000:]}"


def main():
    args = sys.argv[1:]
    seed, mutations = 0, 40
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
        for name, case in cases:
            runs += 1
            problem = run(opt, case)
            if problem:
                failures += 1
                print(f"CRASH {path} {name}: {problem}")
    print(f"fuzz: {runs} runs, {failures} crashes")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
