"""Prints the PTX of every gpu.binary in MLIR text on stdin (the output of
--gpu-module-to-binary=format=isa), unescaped, one module after another, so
that FileCheck can match it line by line: `// ----` and the module name
before each."""
import re
import sys

text = sys.stdin.read()
for name, body in re.findall(r'gpu\.binary @(\S+)\s.*?assembly = "((?:[^"\\]|\\.)*)"',
                             text, re.S):
    ptx = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), body)
    ptx = ptx.replace('\\"', '"').replace("\\\\", "\\")
    print(f"// ---- {name}")
    print(ptx)
