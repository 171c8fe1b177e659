#!/usr/bin/env python3
"""corrupt.py IN.npy OUT.npy INDEX... : copies IN to OUT with the bits of the
element at INDEX (comma-separated) flipped in the lowest bit, to show that a
checker can fail."""
import sys

import numpy as np

a = np.load(sys.argv[1])
idx = tuple(int(v) for v in sys.argv[3].split(","))
if a.dtype == np.uint8:
    a[idx] ^= 1
else:
    a.view(np.uint32)[idx] ^= 1
np.save(sys.argv[2], a)
