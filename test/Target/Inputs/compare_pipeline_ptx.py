"""Compares the PTX that `flamia-opt --flamia-to-ptx` embeds in its gpu.binary
ops with the .ptx files flamia-compile wrote for the same input.

usage: compare_pipeline_ptx.py OPT_OUTPUT.mlir COMPILE_DIR FUNCTION

flamia-opt names a kernel after the graph function (FUNCTION_quantize, ...),
flamia-compile after the kernel set (flamia_quantize, ...): that prefix is
the one difference allowed. Prints one line per kernel; exit 1 on the first
kernel whose PTX differs (with the first differing line), or when the two
sides do not hold the same kernels."""
import os
import re
import sys


def unescape(text):
    """MLIR's string escapes: \\XX (hex byte), \\\\ and \\"."""
    out = bytearray()
    i = 0
    raw = text.encode()
    while i < len(raw):
        c = raw[i]
        if c == ord("\\"):
            nxt = raw[i + 1:i + 3]
            if nxt[:1] in (b"\\", b'"'):
                out += nxt[:1]
                i += 2
                continue
            out.append(int(nxt.decode(), 16))
            i += 3
            continue
        out.append(c)
        i += 1
    return out.decode()


def main():
    opt_path, compile_dir, function = sys.argv[1:4]
    text = open(opt_path).read()
    binaries = re.findall(
        r'gpu\.binary @(\w+)_module\s+\[#gpu\.object<.*?assembly = "((?:[^"\\]|\\.)*)"',
        text)
    if not binaries:
        sys.exit("no gpu.binary with PTX assembly in " + opt_path)
    from_opt = {}
    for symbol, assembly in binaries:
        if not symbol.startswith(function + "_"):
            sys.exit("kernel %s is not named after %s" % (symbol, function))
        kernel = "flamia_" + symbol[len(function) + 1:]
        from_opt[kernel] = unescape(assembly).replace(symbol, kernel)
    from_compile = {
        name[:-4]: open(os.path.join(compile_dir, name)).read()
        for name in os.listdir(compile_dir) if name.endswith(".ptx")
    }
    if sorted(from_opt) != sorted(from_compile):
        sys.exit("different kernels: flamia-opt %s, flamia-compile %s" %
                 (sorted(from_opt), sorted(from_compile)))
    for kernel in sorted(from_opt):
        a, b = from_opt[kernel].splitlines(), from_compile[kernel].splitlines()
        if a != b:
            for n, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    break
            else:
                n = min(len(a), len(b))
            sys.exit("%s: PTX differs at line %d:\n  flamia-opt:     %s\n  "
                     "flamia-compile: %s" % (kernel, n + 1,
                                             a[n] if n < len(a) else "<end>",
                                             b[n] if n < len(b) else "<end>"))
        print("%s: identical (%d lines)" % (kernel, len(a)))


if __name__ == "__main__":
    main()
