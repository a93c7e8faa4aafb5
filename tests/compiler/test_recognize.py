"""Recognition of alltoall vs sparse from the byte matrix."""

from __future__ import annotations

import numpy as np

from conftest import HEADER, compile_text
from phalanx.compiler.recognize import classify, recognize


def test_transpose_is_alltoall():
    c = compile_text(HEADER + "B = A\n").collectives[0]
    assert (c.kind, c.nprocs, c.block_bytes) == ("alltoall", 16, 2048)
    assert c.total_bytes == 16 * 15 * 2048 and c.participants == tuple(range(16))


def test_uneven_blocks_are_sparse():
    source = ("target ideal:4\nprocessors P(3)\narray A(10) of byte distribute BLOCK onto P\n"
              "array B(10) of byte distribute CYCLIC onto P\nB = A\n")
    c = compile_text(source).collectives[0]
    assert c.kind == "sparse" and c.matrix.tolist() == [[2, 1, 1], [1, 2, 1], [1, 0, 1]]


def test_same_distribution_moves_nothing_between_nodes():
    source = ("target ideal:4\nprocessors P(4)\narray A(8) of byte distribute BLOCK onto P\n"
              "array B(8) of byte distribute BLOCK onto P\nB = A\n")
    c = compile_text(source).collectives[0]
    assert c.kind == "sparse" and c.total_bytes == 0


def test_classify_edge_cases():
    assert classify(np.array([[5]])) == "sparse"  # one node: nothing to exchange
    assert classify(np.array([[0, 3], [3, 0]])) == "alltoall"
    assert classify(np.array([[0, 3], [4, 0]])) == "alltoallv"
    assert classify(np.array([[0, 3, 0], [0, 0, 0], [0, 0, 0]])) == "permutation"
    assert classify(np.array([[0, 3, 1], [0, 0, 0], [0, 1, 0]])) == "sparse"
    assert recognize(2, np.array([[1, 2], [2, 1]]), "A", "B", 9).index == 2
