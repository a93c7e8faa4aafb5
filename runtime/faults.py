"""Fault injection around a target's network model: failed links, link errors, corrupted payloads.

`--faults` takes `;`-separated settings, e.g. `link-fail=3:E,5:S;error-rate=0.01;corrupt-rate=0.001`:
  link-fail=NODE:DIR,...  directed links that are down (DIR: E W S N, or +X -X +Y -Y; E = +X is
                          the next column, S = +Y the next row). Tori (iwarp, torus) route around
                          them the only way e-cube allows: the other way round a ring, X still
                          before Y (the dateline keeps that deadlock-free); meshes (paragon) fall
                          back from row-column to column-row routing. A message that no allowed
                          route can carry is a clear error naming the phase and the link.
  error-rate=P            probability that a message arrives damaged; the receiver detects it
                          (Proteus' 4/5 code, 000_df708a39f4a23045.txt Sec. 3.2, "a retransmission
                          is scheduled") and the sender transmits the whole message again.
  corrupt-rate=P          probability that a message's payload has a byte flipped on the way; a
                          CRC-32 of the payload, computed by the sender and checked by the
                          receiver, catches it and the message is sent again. With checksum=off
                          the corrupted bytes are delivered and the run's verification fails.
  retries=N               attempts per message before the run fails loudly (default 16).
  seed=N                  seed of the fault draws (default: the run's --seed).
A retransmission takes the message's resources again (start-up, route, wire time), so faults
cost simulated time through the same contention as every other message. A block is delivered
once, after its message got through, or the run stops with an error: never silently wrong.
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from phalanx.compiler.schedule import Schedule, Transfer
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError, usage_error

DEFAULT_ATTEMPTS = 16
# Direction letter -> (d column, d row) and the torus model's direction index (+X -X +Y -Y).
DIRECTIONS = {"E": (1, 0, 0), "W": (-1, 0, 1), "S": (0, 1, 2), "N": (0, -1, 3),
              "+X": (1, 0, 0), "-X": (-1, 0, 1), "+Y": (0, 1, 2), "-Y": (0, -1, 3)}
# Message ids from here up carry a phase for iWarp's synchronizing switch
# (targets/iwarp/wormhole.py PHASE_TAG; 001_569dde0e56ec3e6f.txt Sec. 2.2).
PHASED_MESSAGE_ID = 1 << 40
SPEC_HELP = "write e.g. --faults 'link-fail=3:E;error-rate=0.01;corrupt-rate=0.001;seed=1'"


@dataclass(frozen=True)
class FaultSpec:
    failed: tuple[tuple[int, str], ...] = ()  # (node, direction) of each failed link
    error_rate: float = 0.0
    corrupt_rate: float = 0.0
    attempts: int = DEFAULT_ATTEMPTS
    seed: int | None = None
    checksum: bool = True


def parse_faults(text: str) -> FaultSpec:
    """The FaultSpec of a `--faults` string; a UsageError that says what is wrong otherwise."""
    spec = FaultSpec()
    for part in filter(None, (p.strip() for p in text.split(";"))):
        key, eq, value = (x.strip() for x in part.partition("="))
        if not eq:
            raise usage_error(f"fault setting '{part}' has no value", SPEC_HELP)
        if key == "link-fail":
            spec = dataclasses.replace(spec, failed=spec.failed + _links(value))
        elif key in ("error-rate", "corrupt-rate"):
            spec = dataclasses.replace(spec, **{key.replace("-", "_"): _rate(key, value)})
        elif key in ("retries", "seed"):
            if not value.isdigit() or (key == "retries" and int(value) < 1):
                raise usage_error(f"{key}={value!r} in --faults is not a "
                                  f"{'positive' if key == 'retries' else 'non-negative'} integer",
                                  SPEC_HELP)
            spec = dataclasses.replace(spec, **{"attempts" if key == "retries" else key: int(value)})
        elif key == "checksum":
            if value not in ("on", "off"):
                raise usage_error(f"checksum={value!r} in --faults must be on or off", SPEC_HELP)
            spec = dataclasses.replace(spec, checksum=value == "on")
        else:
            raise usage_error(f"unknown fault '{key}' in --faults", "known: link-fail, error-rate, "
                              "corrupt-rate, retries, seed, checksum; " + SPEC_HELP)
    return spec


def _rate(key: str, value: str) -> float:
    try:
        rate = float(value)
    except ValueError:
        rate = -1.0
    if not 0.0 <= rate < 1.0:
        raise usage_error(f"{key}={value!r} in --faults is not a probability in [0, 1)", SPEC_HELP)
    return rate


def _links(value: str) -> tuple[tuple[int, str], ...]:
    out = []
    for item in filter(None, (v.strip() for v in value.split(","))):
        match = re.fullmatch(r"(\d+):([EWSN]|[+-][XY])", item, re.IGNORECASE)
        if match is None:
            raise usage_error(f"bad failed link '{item}' in --faults",
                              "write NODE:DIR with DIR one of E, W, S, N (or +X, -X, +Y, -Y), "
                              "e.g. link-fail=3:E")
        out.append((int(match.group(1)), match.group(2).upper()))
    return tuple(out)


class NoRoute(Exception):
    """No route the routing allows avoids the failed links."""

    def __init__(self, src: int, dst: int, link: str):
        super().__init__(f"no route from node {src} to node {dst} avoids the failed {link}")
        self.src, self.dst, self.link = src, dst, link


class AvoidingTorus:
    """A torus (targets/iwarp/topology.py's Torus) whose routes avoid failed links.

    E-cube routing allows two choices per ring: the short way or the long way round; X is
    always routed before Y and `route_with` sets the dateline pools, so every route still
    crosses each ring's dateline at most once and the channel dependencies stay acyclic.
    """

    def __init__(self, torus: Any, failed: frozenset[int]):
        self.torus, self.failed = torus, failed
        self._cache: dict[tuple[int, int], tuple] = {}
        self.rerouted: set[tuple[int, int]] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.torus, name)

    def route(self, src: int, dst: int) -> tuple[tuple[int, int], ...]:
        key = (src, dst)
        if key not in self._cache:
            self._cache[key] = self._choose(src, dst)
        return self._cache[key]

    def _choose(self, src: int, dst: int) -> tuple[tuple[int, int], ...]:
        t = self.torus
        sx, sy = t.steps(src, dst)
        xs = [sx] + ([sx - int(np.sign(sx)) * t.cols] if sx else [])
        ys = [sy] + ([sy - int(np.sign(sy)) * t.rows] if sy else [])
        options = sorted(((x, y) for x in xs for y in ys), key=lambda s: abs(s[0]) + abs(s[1]))
        options.remove((sx, sy))
        first = t.route_with(src, dst, sx, sy)
        for x, y in [(sx, sy)] + options:
            route = first if (x, y) == (sx, sy) else t.route_with(src, dst, x, y)
            if not any(link in self.failed for link, _ in route):
                if (x, y) != (sx, sy):
                    self.rerouted.add((src, dst))
                return route
        blocked = next(link for link, _ in first if link in self.failed)
        raise NoRoute(src, dst, t.link_name(blocked))


def torus_failed_links(torus: Any, failed: tuple[tuple[int, str], ...], spec: str) -> frozenset[int]:
    out = set()
    for node, direction in failed:
        if node >= torus.nnodes:
            raise usage_error(f"failed link {node}:{direction}: {spec} has nodes 0..{torus.nnodes - 1}")
        out.add(node * 4 + DIRECTIONS[direction][2])
    return frozenset(out)


def mesh_avoiding_route(route: Callable, rows: int, cols: int, failed: tuple[tuple[int, str], ...],
                        spec: str, rerouted: set[tuple[int, int]]) -> Callable:
    """Row-column routing that falls back to column-row when a failed link is on the way."""
    down = set()
    for node, direction in failed:
        r, c = divmod(node, cols)
        dc, dr, _ = DIRECTIONS[direction]
        if node >= rows * cols or not (0 <= r + dr < rows and 0 <= c + dc < cols):
            raise usage_error(f"failed link {node}:{direction} is not a link of the {rows}x{cols} "
                              f"mesh of {spec}", "name a node and a direction that has a neighbour")
        down.add(((r, c), (r + dr, c + dc)))

    def column_row(src: int, dst: int) -> list:
        (r, c), (r2, c2) = divmod(src, cols), divmod(dst, cols)
        hops = []
        while r != r2:
            step = 1 if r2 > r else -1
            hops.append(((r, c), (r + step, c)))
            r += step
        while c != c2:
            step = 1 if c2 > c else -1
            hops.append(((r, c), (r, c + step)))
            c += step
        return hops

    def avoiding(src: int, dst: int) -> list:
        first = route(src, dst)
        for hops in (first, column_row(src, dst)):
            if not down.intersection(hops):
                if hops is not first:
                    rerouted.add((src, dst))
                return hops
        (a, b) = next(h for h in first if h in down)
        raise NoRoute(src, dst, f"link {a}->{b}".replace(", ", ","))

    return avoiding


class FaultyNetwork:
    """Wraps a NetworkModel: reroutes around failed links, injects errors, retransmits."""

    def __init__(self, inner: Any, spec: FaultSpec, target: Any, engine: Any, seed: int):
        self.inner, self.spec, self.engine = inner, spec, engine
        self.rng = np.random.default_rng(spec.seed if spec.seed is not None else seed)
        self.stats = {"messages": 0, "attempts": 0, "link_errors": 0, "corrupted": 0,
                      "corrupted_caught": 0, "corrupted_delivered": 0}
        self.route_check: Callable[[int, int], Any] | None = None
        self.rerouted: set[tuple[int, int]] = set()  # pairs that left their usual route
        if spec.failed:
            self._install_reroute(target)

    def _install_reroute(self, target: Any) -> None:
        inner, spec_text = self.inner, target.spec
        if hasattr(inner, "torus"):  # the wormhole torus of targets/iwarp
            avoiding = AvoidingTorus(inner.torus, torus_failed_links(inner.torus, self.spec.failed,
                                                                     spec_text))
            inner.torus = avoiding
            self.route_check, self.rerouted = avoiding.route, avoiding.rerouted
        elif callable(getattr(inner, "hops", None)) and hasattr(inner, "cols"):
            # the mesh of targets/bokhari/network.py: `hops(src, dst)` is its routing function
            inner.hops = mesh_avoiding_route(inner.hops, inner.rows, inner.cols, self.spec.failed,
                                             spec_text, self.rerouted)
            self.route_check = inner.hops
        else:
            raise usage_error(f"link-fail is not supported on {spec_text}: its network has no "
                              "torus or mesh links to fail",
                              "use link-fail on iwarp, torus or paragon targets; error-rate and "
                              "corrupt-rate work on every target")

    def __getattr__(self, name: str) -> Any:  # copy_time_s, barrier_time_s, resources, layout...
        return getattr(self.inner, name)

    def fast_plan(self, schedule: Schedule) -> None:
        """No fast path under faults: its proof assumes every link up and no retransmission."""
        return None

    def transfer(self, t: Transfer) -> Generator[Any, Any, None]:
        yield from self.inner.transfer(t)

    def deliver(self, t: Transfer, payloads: list[np.ndarray], where: str):
        """Send `t` until it arrives intact; return the payloads as the receiver got them."""
        self._check_route(t, where)
        self.stats["messages"] += 1
        errors = caught = 0
        for _ in range(self.spec.attempts):
            self.stats["attempts"] += 1
            yield from self.inner.transfer(t)
            damaged, corrupt = self.rng.random(2)
            if damaged < self.spec.error_rate:
                errors += 1
                self.stats["link_errors"] += 1
                continue
            if corrupt >= self.spec.corrupt_rate or not any(p.nbytes for p in payloads):
                return payloads
            received = self._corrupt(payloads)
            self.stats["corrupted"] += 1
            if not self.spec.checksum:
                self.stats["corrupted_delivered"] += 1
                return received
            if _crc(received) != _crc(payloads):
                caught += 1
                self.stats["corrupted_caught"] += 1
                continue
            return received  # pragma: no cover (a flipped byte always changes the CRC)
        raise PhalanxError(Diagnostic(
            f"the run failed: the message from node {t.src} to node {t.dst} in {where} did not "
            f"get through in {self.spec.attempts} attempts ({errors} link errors, {caught} "
            "corrupted payloads caught by the checksum)",
            hint="lower error-rate / corrupt-rate in --faults, or allow more attempts with "
                 "retries=N"))

    def _check_route(self, t: Transfer, where: str) -> None:
        if self.route_check is None:
            return
        try:
            self.route_check(t.src, t.dst)
        except NoRoute as no:
            raise PhalanxError(Diagnostic(
                f"{where}: {no}; the routing allows no way around it",
                hint="remove that link from link-fail, or choose a schedule that does not send "
                     f"from node {no.src} to node {no.dst}")) from None
        torus = getattr(self.inner, "torus", None)
        if t.message >= PHASED_MESSAGE_ID and (t.src, t.dst) in getattr(torus, "rerouted", ()):
            link = next(torus.link_name(k) for k, _ in torus.torus.route(t.src, t.dst)
                        if k in torus.failed)
            raise PhalanxError(Diagnostic(
                f"{where}: the phased message from node {t.src} to node {t.dst} needs the failed "
                f"{link}; the synchronizing switch counts one message per link and phase "
                "(001_569dde0e56ec3e6f.txt Sec. 2.2), so it cannot take another route",
                hint="with failed links use an unphased algorithm, e.g. "
                     "--algorithm alltoall=message-passing"))

    def _corrupt(self, payloads: list[np.ndarray]) -> list[np.ndarray]:
        """A copy of the payloads with one byte of one non-empty payload XORed (never by 0)."""
        out = [p.copy() for p in payloads]
        which = [i for i, p in enumerate(out) if p.nbytes]
        victim = out[which[int(self.rng.integers(len(which)))]]
        raw = victim.reshape(-1).view(np.uint8)
        raw[int(self.rng.integers(raw.size))] ^= int(self.rng.integers(1, 256))
        return out

    def summary(self) -> dict[str, Any]:
        out = dict(self.stats)
        out["retransmissions"] = out["attempts"] - out["messages"]
        if self.spec.failed:
            out["rerouted_pairs"] = len(self.rerouted)
        return out


def _crc(payloads: list[np.ndarray]) -> int:
    crc = 0
    for p in payloads:
        crc = zlib.crc32(np.ascontiguousarray(p).view(np.uint8).tobytes(), crc)
    return crc
