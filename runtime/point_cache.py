"""The cache of finished points: one JSON file per point, named by the hash of its key.

A point's key is its full description (target spec with its parameters, kind, size, algorithm,
seed, program hash, ...) together with Phalanx's version and a fingerprint of Phalanx's own
source files (so that a changed simulator or algorithm never serves an old result under an
unchanged version number). A file is written as soon as its point finishes, by renaming a
finished temporary file, so a point is either whole in the cache or absent.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import phalanx
from phalanx.grammar.diagnostics import usage_error

if TYPE_CHECKING:
    from phalanx.runtime.parallel import Outcome

PACKAGE_ROOT = Path(phalanx.__file__).resolve().parent
SOURCE_DIRS = ("compiler", "runtime", "targets", "grammar")
SOURCE_SUFFIXES = (".py", ".lark", ".g4", ".irdl")


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """A hash of every source file of the package (the code that decides a point's result)."""
    digest = hashlib.sha256()
    files = [PACKAGE_ROOT / "__init__.py"] + sorted(
        f for d in SOURCE_DIRS for f in (PACKAGE_ROOT / d).rglob("*")
        if f.suffix in SOURCE_SUFFIXES and "__pycache__" not in f.parts)
    for f in files:
        digest.update(str(f.relative_to(PACKAGE_ROOT)).encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


def default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/phalanx/points, else ~/.cache/phalanx/points."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "phalanx" / "points"


class PointCache:
    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise usage_error(f"cannot use '{directory}' as the point cache: {exc}",
                              "give a writable directory with --cache DIR") from None

    def key(self, description: dict[str, Any]) -> str:
        full = {"phalanx": phalanx.__version__, "source": source_fingerprint(), **description}
        return hashlib.sha256(json.dumps(full, sort_keys=True).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> Outcome | None:
        from phalanx.runtime.parallel import Outcome

        try:
            data = json.loads(self._path(key).read_text())
        except (OSError, ValueError):  # absent, or unreadable: compute the point again
            return None
        return Outcome.from_json(data["outcome"])

    def put(self, key: str, description: dict[str, Any], outcome: Outcome) -> None:
        path = self._path(key)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({"description": description, "outcome": outcome.to_json()}))
        partial.replace(path)

    def count(self) -> int:
        """How many points the cache holds."""
        return sum(1 for _ in self.directory.glob("*.json"))
