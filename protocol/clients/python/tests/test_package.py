"""The package as installed: version, typing marker, public names.

With $PARLANCE_CLIENT_INSTALLED_IN set (scripts/test-extra.sh sets it to the directory it
ran `pip install --target` into), the package under test must be the installed one, with
its distribution metadata."""

from __future__ import annotations

import os
import re

import parlance_client

INSTALLED_IN = os.environ.get("PARLANCE_CLIENT_INSTALLED_IN")


def test_version_and_typing_marker() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", parlance_client.__version__)
    here = os.path.dirname(os.path.abspath(parlance_client.__file__))
    assert os.path.isfile(os.path.join(here, "py.typed")), "py.typed is missing: type checkers would ignore the hints"


def test_public_names() -> None:
    for name in parlance_client.__all__:
        assert getattr(parlance_client, name) is not None, name


def test_installed_package_when_expected() -> None:
    if not INSTALLED_IN:
        return
    from importlib import metadata

    path = os.path.realpath(parlance_client.__file__)
    assert path.startswith(os.path.realpath(INSTALLED_IN) + os.sep), f"testing {path}, not the installed package"
    dist = metadata.distribution("parlance-client")
    assert dist.version == parlance_client.__version__
    files = {str(f) for f in dist.files or []}
    assert "parlance_client/py.typed" in files and "parlance_client/tools.py" in files
    assert not any(f.startswith("tests/") for f in files), "the tests must not be installed"
