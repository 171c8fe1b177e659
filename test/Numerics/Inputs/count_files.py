#!/usr/bin/env python3
"""count_files.py DIR PREFIX: prints how many files in DIR start with PREFIX."""
import os
import sys

names = [n for n in os.listdir(sys.argv[1]) if n.startswith(sys.argv[2])]
print(f"{len(names)} files named {sys.argv[2]}*")
for n in sorted(names):
    print(n)
