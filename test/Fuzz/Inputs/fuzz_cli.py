"""Runs the tools with seeded random command lines: flags each tool knows,
with values from a pool of edge cases (zero, negative, past 32 and 64 bits,
NaN, garbage, missing files). Every run must end with a diagnostic or a
result (exit 0-3) within the time limit: no signal, no stack dump, no
sanitizer report, no uncaught exception.

usage: fuzz_cli.py BIN_DIR WORK_DIR [--seed N] [--runs N] [--tools a,b,...]
"""
import os
import random
import subprocess
import sys

VALUES = ["0", "1", "-1", "2", "3", "7", "16", "31", "32", "48", "64", "96", "128", "129",
          "255", "65535", "65536", "2147483647", "2147483648", "-2147483649",
          "4294967296", "9223372036854775807", "9223372036854775808", "1e9", "1e-60",
          "nan", "inf", "-0", "0.5", "abc", "", " ", "0x10", "1,2", "0,5,3", "0,100,228,300",
          "0,2147483647", "--", "/nonexistent/file.npy", "sm_90a", "sm_100a", "sm_80",
          "mxfp8", "nvfp4", "nvfp4-mixed", "1x32", "32x32", "16x16", "lpt", "fixed2k",
          "single", "docs:1,2,3", "docs:-5", "docs:", "lognormal1k", "tiny34"]

REF_COMMON = ["--tokens", "--heads", "--kv-heads", "--head-dim", "--seed", "--recipe",
              "--safe-block", "--softmax-scale", "--causal", "--strict", "--cu-seqlens",
              "--format", "--block", "--workload", "--outliers", "-o"]
TOOLS = {
    "flamia-ref": (["quantize", "attention", "leakcheck", "quality", "schedule", "bogus", ""],
                   REF_COMMON + ["--packed", "--block-m", "--block-n", "--sms", "--order",
                                 "--target", "--item-overhead", "--print-items", "--cuts",
                                 "--doc-lengths", "--dump-items", "--dump-metadata",
                                 "--write-cu-seqlens", "--help", "--version"]),
    "flamia-desc": (["idesc", "mma-opcode", "smem-desc", "sf-desc", "wgmma-desc",
                     "wgmma-opcode", "tmem", "fill", "bogus"],
                    ["m=", "n=", "k=", "lane=", "col=", "a=", "b=", "d=", "kind=",
                     "swizzle=", "lbo=", "sbo=", "addr=", "major=", "scale=", "-o",
                     "--version", "--help"]),
    "flamia-run": ([""],
                   ["--artifacts", "--workload", "--tokens", "--heads", "--kv-heads", "--seed",
                    "--outliers", "--softmax-scale", "--q", "--k", "--v", "--cu-seqlens",
                    "--device", "--check", "--ref-heads", "--ref-budget", "--leakcheck",
                    "--sanitize-friendly", "--dump", "--bench", "--warmup", "--quantize-match",
                    "--version", "--selftest", "-v"]),
    "flamia-compile": ([""],
                       ["--target", "--recipe", "--head-dim", "--heads", "--kv-heads",
                        "--causal", "--varlen", "--safe-block", "--softmax-scale",
                        "--ptx-only", "--scale-tiles", "--overlap-softmax", "--emit-ir",
                        "--ptxas", "--version", "-o"]),
    "flamia-interp": ([""],
                      ["--function", "--seed", "--token-spread", "--tokens", "--cu-seqlens",
                       "-o", "--dump-inputs", "--dump-outputs", "--trace-scores",
                       "--split-input-file", "--version"]),
}
# Flags that take no value (the others get one from VALUES).
SWITCHES = {"--causal", "--strict", "--packed", "--outliers", "--check", "--leakcheck",
            "--sanitize-friendly", "--version", "--selftest", "-v", "--varlen", "--ptx-only",
            "--scale-tiles", "--emit-ir", "--trace-scores", "--split-input-file", "--help",
            "--print-items"}
# Seconds a run may take: every case here is small or refused at once, but
# some run the CPU reference (`flamia-ref leakcheck` with its defaults takes
# 1.6 s in a release build, 30 s and more under ASan on two busy cores, as a
# clean-clone make test measured on 2026-12-02): a hang, not a slow sanitized
# run, is what this catches.
TIMEOUT = 180
BAD_OUTPUT = ("Stack dump", "AddressSanitizer", "runtime error:", "terminate called",
              "LLVM ERROR", "Assertion", "Segmentation fault", "std::bad_alloc")


def small(values):
    """The pool without valid but large sizes: the CPU reference's O(T^2)
    work on 65535 tokens is a long run, not a hang."""
    return [v for v in values if not (v.isdigit() and 300 < int(v) < 2**31)]


def command_line(rng, tool, examples, work):
    subcommands, flags = TOOLS[tool]
    values = small(VALUES) if tool in ("flamia-interp", "flamia-ref") else VALUES
    args = []
    sub = rng.choice(subcommands)
    if sub:
        args.append(sub)
    if sub == "quality":  # its default size is a several-second measurement
        args += ["--tokens", "64"]
    if tool == "flamia-interp":
        args.append(rng.choice(examples + ["/nonexistent.mlir"]))
    if tool == "flamia-compile" and rng.random() < 0.3:
        args.append(rng.choice(examples))
    for _ in range(rng.randrange(0, 5)):
        flag = rng.choice(flags)
        if flag.endswith("="):
            args.append(flag + rng.choice(values))
        elif flag in SWITCHES:
            args.append(flag)
        elif flag == "-o" or flag.startswith("--dump"):
            args += [flag, os.path.join(work, rng.choice(["out", "out.npy", "d/e"]))]
        else:
            args.append(flag)
            if rng.random() < 0.9:
                args.append(rng.choice(values))
    if tool == "flamia-compile" and "-o" not in args:
        args += ["-o", os.path.join(work, "c")]
    return args


def main():
    args = sys.argv[1:]
    opts = {"--seed": "1", "--runs": "40", "--tools": ",".join(TOOLS)}
    for k in list(opts):
        if k in args:
            i = args.index(k); opts[k] = args[i + 1]; del args[i:i + 2]
    bin_dir, work = args[0], args[1]
    # Example 02 has dynamic shapes: its size comes from the command line.
    # (Example 03's 32k-token document is a legitimately long CPU run.)
    examples = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples",
                             "02-packed-documents-d64-gqa.mlir")]
    os.makedirs(work, exist_ok=True)
    rng = random.Random(int(opts["--seed"]))
    env = dict(os.environ, FLAMIA_PTXAS="/nonexistent/ptxas")
    runs = failures = 0
    for tool in opts["--tools"].split(","):
        exe = os.path.abspath(os.path.join(bin_dir, tool))
        if not os.access(exe, os.X_OK):
            continue  # not built in this configuration
        for _ in range(int(opts["--runs"])):
            argv = command_line(rng, tool, examples, work)
            runs += 1
            try:
                p = subprocess.run([exe] + argv, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                   capture_output=True, timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                failures += 1
                print(f"HANG {tool} {argv}")
                continue
            text = (p.stdout + p.stderr).decode(errors="replace")
            bad = [b for b in BAD_OUTPUT if b in text]
            if p.returncode < 0 or p.returncode > 3 or bad:
                failures += 1
                print(f"CRASH {tool} {argv}: exit {p.returncode} {bad}\n{text[-1500:]}")
    print(f"fuzz-cli: {runs} runs, {failures} crashes")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
