"""Compiles kernel sets ahead of time, for a machine without the compiler:

    python -m flamia.precompile --out DIR --target sm_90a --head-dim 128 \
        [--no-causal] [--train | --both]

writes DIR/<key> for each set (the directory names the op looks for), then on
the GPU machine: FLAMIA_KERNEL_DIR=DIR python train.py. A set serves every
query and key/value head count (the kernels take them at run time). --train is the
training step (forward and backward kernels), the default the forward alone
(what the op runs under torch.no_grad()), --both writes the two.
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import sys

from . import _kernels


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m flamia.precompile",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, type=pathlib.Path)
    p.add_argument("--target", required=True, choices=["sm_90a", "sm_100a"])
    p.add_argument("--head-dim", required=True, type=int)
    # Accepted from scripts written for sets specialized by head counts;
    # a set now serves every head count, so they change nothing (a note
    # says so).
    p.add_argument("--heads", type=int, help=argparse.SUPPRESS)
    p.add_argument("--kv-heads", type=int, help=argparse.SUPPRESS)
    p.add_argument("--no-causal", action="store_true")
    p.add_argument("--recipe", default="mxfp8")
    p.add_argument("--safe-block", type=int, default=128)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--train", action="store_true")
    g.add_argument("--both", action="store_true")
    a = p.parse_args(argv)
    if a.heads is not None or a.kv_heads is not None:
        print("note: --heads/--kv-heads are not needed: a kernel set serves "
              "every query and key/value head count", file=sys.stderr)
    kinds = [False, True] if a.both else [a.train]
    a.out.mkdir(parents=True, exist_ok=True)
    for backward in kinds:
        spec = _kernels.KernelSpec(
            target=a.target, head_dim=a.head_dim, causal=not a.no_causal,
            recipe=a.recipe, safe_block=a.safe_block, backward=backward)
        dest = a.out / spec.key()
        if (dest / "manifest.json").is_file():
            print(f"{dest}: exists")
            continue
        tmp = a.out / f".{spec.key()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            _kernels.compile_into(spec, tmp)
        except (ValueError, RuntimeError) as e:
            shutil.rmtree(tmp, ignore_errors=True)
            print(f"error: {e}", file=sys.stderr)
            return 1
        tmp.rename(dest)
        print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
