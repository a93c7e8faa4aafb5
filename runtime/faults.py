"""Fault injection around a target's network model: failed links, link errors, corrupted payloads.

`--faults` takes `;`-separated settings, e.g. `link-fail=3:E,5:S;error-rate=0.01;corrupt-rate=0.001`:
  link-fail=NODE:DIR,...  directed links that are down (DIR: E W S N, or +X -X +Y -Y; E = +X is
                          the next column, S = +Y the next row). The network routes around them
                          its own way (Network.avoid_links): tori (iwarp, torus) the other way
                          round a ring, X still before Y; meshes (paragon) column-row instead of
                          row-column. A message that no allowed route can carry is a clear error
                          naming the phase and the link.
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
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from phalanx.compiler.schedule import Schedule, Transfer
from phalanx.grammar.diagnostics import Diagnostic, PhalanxError, usage_error
from phalanx.runtime.network import Layout, Network, NoRoute, TransferProgram

DEFAULT_ATTEMPTS = 16
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


class FaultyNetwork(Network):
    """A machine's network with faults: it routes around failed links (the network's own
    `avoid_links`), injects errors into the messages it carries and retransmits them."""

    sees_payloads = True

    def __init__(self, inner: Network, spec: FaultSpec, target_spec: str, seed: int):
        self.inner, self.spec = inner, spec
        self.rng = np.random.default_rng(spec.seed if spec.seed is not None else seed)
        self.counts = {"messages": 0, "attempts": 0, "link_errors": 0, "corrupted": 0,
                       "corrupted_caught": 0, "corrupted_delivered": 0}
        if spec.failed:
            inner.avoid_links(spec.failed, target_spec)

    # -- the inner network's operations, as they are ----------------------------------

    def copy_time_s(self, nbytes: int) -> float:
        return self.inner.copy_time_s(nbytes)

    def copy_program(self, node: int, nbytes: int) -> TransferProgram:
        return self.inner.copy_program(node, nbytes)

    def barrier_time_s(self, nnodes: int) -> float:
        return self.inner.barrier_time_s(nnodes)

    def combine_time_s(self, operations: int) -> float:
        return self.inner.combine_time_s(operations)

    def resources(self) -> list[Any]:
        return self.inner.resources()

    def packs(self, message: int) -> bool:
        return self.inner.packs(message)

    def stats(self) -> dict[str, Any]:
        return self.inner.stats()

    def layout(self) -> Layout | None:
        return self.inner.layout()

    def route(self, src: int, dst: int) -> list[str] | None:
        return self.inner.route(src, dst)

    def link_spans(self) -> list[tuple[str, float, float]]:
        return self.inner.link_spans()

    def pack(self, t: Transfer, nbytes: int) -> Generator[Any, Any, None]:
        yield from self.inner.pack(t, nbytes)  # once: a retransmission resends the packed buffer

    def unpack(self, t: Transfer, nbytes: int) -> Generator[Any, Any, None]:
        yield from self.inner.unpack(t, nbytes)  # once, from the copy that arrived intact

    # -- what faults change ------------------------------------------------------------

    def fast_plan(self, schedule: Schedule) -> None:
        """No fast path under faults: its proof assumes every link up and no retransmission."""
        return None

    def transfer(self, t: Transfer) -> Generator[Any, Any, None]:
        yield from self.inner.transfer(t)

    def deliver(self, t: Transfer, payloads: list[np.ndarray], where: str):
        """Send `t` until it arrives intact; return the payloads as the receiver got them."""
        self._check_route(t, where)
        self.counts["messages"] += 1
        errors = caught = 0
        for _ in range(self.spec.attempts):
            self.counts["attempts"] += 1
            yield from self.inner.transfer(t)
            damaged, corrupt = self.rng.random(2)
            if damaged < self.spec.error_rate:
                errors += 1
                self.counts["link_errors"] += 1
                continue
            if corrupt >= self.spec.corrupt_rate or not any(p.nbytes for p in payloads):
                return payloads
            received = self._corrupt(payloads)
            self.counts["corrupted"] += 1
            if not self.spec.checksum:
                self.counts["corrupted_delivered"] += 1
                return received
            if _crc(received) != _crc(payloads):
                caught += 1
                self.counts["corrupted_caught"] += 1
                continue
            return received  # pragma: no cover (a flipped byte always changes the CRC)
        raise PhalanxError(Diagnostic(
            f"the run failed: the message from node {t.src} to node {t.dst} in {where} did not "
            f"get through in {self.spec.attempts} attempts ({errors} link errors, {caught} "
            "corrupted payloads caught by the checksum)",
            hint="lower error-rate / corrupt-rate in --faults, or allow more attempts with "
                 "retries=N"))

    def _check_route(self, t: Transfer, where: str) -> None:
        try:
            self.inner.check_route(t)
        except NoRoute as no:
            raise PhalanxError(Diagnostic(f"{where}: {no}", hint=no.hint)) from None

    def _corrupt(self, payloads: list[np.ndarray]) -> list[np.ndarray]:
        """A copy of the payloads with one byte of one non-empty payload XORed (never by 0)."""
        out = [p.copy() for p in payloads]
        which = [i for i, p in enumerate(out) if p.nbytes]
        victim = out[which[int(self.rng.integers(len(which)))]]
        raw = victim.reshape(-1).view(np.uint8)
        raw[int(self.rng.integers(raw.size))] ^= int(self.rng.integers(1, 256))
        return out

    def summary(self) -> dict[str, Any]:
        """What fault injection did (`run --json`'s `faults`)."""
        out = dict(self.counts)
        out["retransmissions"] = out["attempts"] - out["messages"]
        if self.spec.failed:
            out["rerouted_pairs"] = self.inner.rerouted_pairs()
        return out


def _crc(payloads: list[np.ndarray]) -> int:
    crc = 0
    for p in payloads:
        crc = zlib.crc32(np.ascontiguousarray(p).view(np.uint8).tobytes(), crc)
    return crc
