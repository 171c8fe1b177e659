"""Compiled kernel sets, found or compiled on first use.

A kernel set (manifest.json and cubins, docs/runtime-abi.md) is specialized by
its spec: target, recipe, head dim, causal, safe block, and whether it holds
the backward too. Head counts are not part of it: the kernels take query and
key/value heads (any GQA ratio) as run-time arguments, so one set serves
every model of a head dim. Its directory name is the spec's
key, prefixed by the compiler version. It is looked up, in order:
  1. in each directory of $FLAMIA_KERNEL_DIR (artifacts compiled elsewhere,
     e.g. with `python -m flamia.precompile` on a machine with LLVM);
  2. in the cache, $FLAMIA_CACHE_DIR or ~/.cache/flamia;
and otherwise compiled into the cache with the bundled compiler
(libflamia_compiler.so, or a flamia-compile executable). Compiling writes a
private temporary directory and renames it into place: concurrent processes
never see a partial set, and the first to finish wins.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import subprocess
import tempfile
import threading

from . import _native

VERSION = "0.1.0"


@dataclasses.dataclass(frozen=True)
class KernelSpec:
    target: str          # "sm_90a", "sm_100a"
    head_dim: int
    causal: bool = True
    recipe: str = "mxfp8"
    safe_block: int = 128
    backward: bool = False
    grad_dtype: str = "bf16"

    def key(self) -> str:
        kind = f"train-{self.grad_dtype}" if self.backward else "fwd"
        # "-anyh": the set takes every head count (runtime heads).
        return (f"v{VERSION}-{self.target}-{self.recipe}-d{self.head_dim}"
                f"-anyh-{'causal' if self.causal else 'full'}"
                f"-sb{self.safe_block}-{kind}")


def cache_dir() -> pathlib.Path:
    env = os.environ.get("FLAMIA_CACHE_DIR")
    if env:
        return pathlib.Path(env)
    return pathlib.Path.home() / ".cache" / "flamia"


def kernel_dirs() -> list[pathlib.Path]:
    env = os.environ.get("FLAMIA_KERNEL_DIR", "")
    return [pathlib.Path(d) for d in env.split(os.pathsep) if d]


def find(spec: KernelSpec) -> pathlib.Path | None:
    for d in kernel_dirs() + [cache_dir()]:
        p = d / spec.key()
        if (p / "manifest.json").is_file():
            return p
    return None


def _compile_with_library(spec: KernelSpec, out: pathlib.Path) -> bool:
    """Compiles through libflamia_compiler.so; False when it is missing."""
    if _native.find_library("flamia_compiler") is None:
        return False
    from . import _compiler_abi
    _compiler_abi.compile_spec(_native.load("flamia_compiler"), spec, out)
    return True


def _flamia_compile_executable() -> str | None:
    env = os.environ.get("FLAMIA_COMPILE")
    if env:
        return env
    here = pathlib.Path(__file__).resolve().parent
    for p in (here / "_bin" / "flamia-compile",
              here.parent.parent / "build" / "bin" / "flamia-compile"):
        if p.is_file():
            return str(p)
    return shutil.which("flamia-compile")


def _compile_with_executable(spec: KernelSpec, out: pathlib.Path) -> bool:
    exe = _flamia_compile_executable()
    if exe is None:
        return False
    cmd = [exe, f"--target={spec.target}", f"--recipe={spec.recipe}",
           f"--head-dim={spec.head_dim}", "--runtime-heads",
           f"--safe-block={spec.safe_block}",
           "--varlen", "-o", str(out)]
    if spec.causal:
        cmd.append("--causal")
    if spec.backward:
        cmd += ["--backward", f"--grad-dtype={spec.grad_dtype}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        msg = (r.stderr or r.stdout).strip()
        raise ValueError(f"cannot compile kernels for {spec.key()}: {msg}")
    return True


def compiler_available() -> bool:
    """Whether this install can compile kernel sets itself."""
    return (_native.find_library("flamia_compiler") is not None
            or _flamia_compile_executable() is not None)


def compile_into(spec: KernelSpec, out: pathlib.Path) -> None:
    """Compiles `spec` into directory `out` (created)."""
    if not (_compile_with_library(spec, out)
            or _compile_with_executable(spec, out)):
        raise _native.FlamiaError(
            5, f"no kernels for {spec.key()} in $FLAMIA_KERNEL_DIR or the "
            f"cache ({cache_dir()}), and no compiler to build them: this "
            "install has neither libflamia_compiler.so nor flamia-compile "
            "(compile them elsewhere with `python -m flamia.precompile` and "
            "set FLAMIA_KERNEL_DIR)")


_lock = threading.Lock()


def get(spec: KernelSpec) -> pathlib.Path:
    """The directory of `spec`'s kernel set, compiling it on first use."""
    with _lock:
        found = find(spec)
        if found is not None:
            return found
        root = cache_dir()
        root.mkdir(parents=True, exist_ok=True)
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=f".{spec.key()}.",
                                            dir=root))
        try:
            compile_into(spec, tmp / "set")
            final = root / spec.key()
            try:
                os.rename(tmp / "set", final)
            except OSError:
                # Another process renamed its copy first: use that one.
                if not (final / "manifest.json").is_file():
                    raise
            return final
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
