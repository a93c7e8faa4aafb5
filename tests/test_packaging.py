"""What a wheel ships: pyproject.toml's package list and package data against the source tree.

The repository root is the package `phalanx` (`package-dir = {"phalanx" = "."}`), so setuptools
ships exactly the packages pyproject.toml lists; a package folder left out of the list is missing
from every wheel. These checks keep the list equal to the package folders under the four pipeline
folders, and every data file beside the code either shipped by a package-data glob or named here
as kept out on purpose. The wheel itself is built, installed and run by CI (.ci/wheel-check).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = ("grammar", "compiler", "runtime", "targets")
ROOT_MODULES = {"__init__.py", "cli.py", "cli_explore.py"}  # the root package ships every .py at the root
NOT_SHIPPED = {  # files beside the code that a user of the package does not need
    "grammar/_antlr/README.md": "how grammar/_antlr/ is generated, for developers",
    "grammar/tools/generate_antlr.sh": "`make antlr`, run from a checkout",
    # The native event core is a package of its own (phalanx_engine_core), built by maturin from
    # its crate: `make setup` and .ci/wheel-check install it with `pip install runtime/engine_core`.
    "runtime/engine_core/Cargo.toml": "the native core's crate, built by its own pyproject.toml",
    "runtime/engine_core/Cargo.lock": "the native core's pinned crates",
    "runtime/engine_core/pyproject.toml": "builds the native core's own wheel (maturin)",
    "runtime/engine_core/.cargo/config.toml": "puts cargo's output in build/, outside the package",
    "runtime/engine_core/src/lib.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/api.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/model.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/resources.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/walkers.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/data.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/shapes.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/events.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/gates.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/wormhole.rs": "the native core's source, compiled into phalanx_engine_core",
    "runtime/engine_core/src/owned.rs": "the native core's source, compiled into phalanx_engine_core",
}

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def source_folders() -> list[Path]:
    """Every folder under the pipeline folders, the pipeline folders included."""
    return sorted(d for top in PIPELINE for d in [ROOT / top, *(ROOT / top).rglob("*")]
                  if d.is_dir() and "__pycache__" not in d.parts)


def package_name(folder: Path) -> str:
    return ".".join(("phalanx", *folder.relative_to(ROOT).parts))


def package_folder(name: str) -> Path:
    return ROOT.joinpath(*name.split(".")[1:])


def test_package_list_is_every_package_folder():
    listed = set(SETUPTOOLS["packages"])
    found = {"phalanx"} | {package_name(d) for d in source_folders() if (d / "__init__.py").is_file()}
    assert SETUPTOOLS["package-dir"] == {"phalanx": "."}
    assert not found - listed, f"add to pyproject.toml [tool.setuptools] packages: {sorted(found - listed)}"
    assert not listed - found, f"listed in pyproject.toml but no package folder: {sorted(listed - found)}"


def test_no_module_outside_a_package():
    """A .py file in a folder without __init__.py would be left out of the wheel without a word."""
    loose = [str(d.relative_to(ROOT)) for d in source_folders()
             if any(d.glob("*.py")) and not (d / "__init__.py").is_file()]
    assert not loose, f"folders with modules but no __init__.py (add one): {loose}"


def test_root_holds_only_the_package_modules():
    """Every .py at the root becomes `phalanx.<name>`: scripts and conftest.py belong elsewhere."""
    assert {p.name for p in ROOT.glob("*.py")} == ROOT_MODULES


def test_tests_bench_docs_examples_are_not_shipped():
    listed = SETUPTOOLS["packages"]
    for top in ("tests", "bench", "docs", "examples"):
        assert not [p for p in listed if p == f"phalanx.{top}" or p.startswith(f"phalanx.{top}.")]
        assert not (ROOT / top / "__init__.py").exists()  # pytest and bench/ import from the folders


def test_every_package_data_glob_matches_a_file():
    data = SETUPTOOLS["package-data"]
    for package, globs in data.items():
        assert package in SETUPTOOLS["packages"], f"package-data for an unlisted package {package}"
        for glob in globs:
            assert list(package_folder(package).glob(glob)), f"{package}: {glob!r} matches no file"


def test_every_data_file_is_shipped_or_kept_out_on_purpose():
    """A file the code reads at run time (the lark grammar, ...) must be in package-data."""
    shipped = {f for package, globs in SETUPTOOLS["package-data"].items() for glob in globs
               for f in package_folder(package).glob(glob)}
    unshipped = [f.relative_to(ROOT).as_posix() for d in source_folders() for f in sorted(d.iterdir())
                 if f.is_file() and f.suffix != ".py" and not f.name.startswith(".") and f not in shipped]
    unshipped = [rel for rel in unshipped if rel not in NOT_SHIPPED]
    assert not unshipped, f"add to [tool.setuptools.package-data] or to NOT_SHIPPED here: {unshipped}"
    missing = [rel for rel in NOT_SHIPPED if not (ROOT / rel).is_file()]
    assert not missing, f"NOT_SHIPPED names files that do not exist: {missing}"
