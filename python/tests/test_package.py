"""The package itself: one version everywhere, and (in `make test`, which
sets FLAMIA_EXPECT_INSTALLED) the installed wheel rather than the checkout."""
from __future__ import annotations

import os
import pathlib
import re

import pytest

import flamia
from flamia import _native

from conftest import ROOT


def test_one_version_everywhere():
    lib = _native.load("flamia_reference")
    assert lib.flamia_reference_version().decode() == flamia.__version__
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == \
        flamia.__version__
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r"project\(flamia .*VERSION ([0-9.]+)\)", cmake).group(1) \
        == flamia.__version__


@pytest.mark.skipif(os.environ.get("FLAMIA_EXPECT_INSTALLED") != "1",
                    reason="only for the installed wheel")
def test_the_installed_wheel_is_tested():
    package = pathlib.Path(flamia.__file__).resolve().parent
    assert ROOT / "python" not in package.parents and \
        package != ROOT / "python" / "flamia"
    assert _native.find_library("flamia_reference") == \
        package / "_lib" / "libflamia_reference.so"
    assert _native.find_library("flamia_runtime") == \
        package / "_lib" / "libflamia_runtime.so"
