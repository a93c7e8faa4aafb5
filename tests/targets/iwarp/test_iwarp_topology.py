"""Torus numbering, e-cube routes, datelines and the half-way tie rule."""

from __future__ import annotations

import numpy as np

from phalanx.targets.iwarp.topology import PLUS_X, PLUS_Y, Torus, ring_step, route_links


def test_routes_go_x_then_y_the_short_way():
    t = Torus(8, 8)
    route = t.route(t.node(1, 1), t.node(3, 7))  # +2 in X, -2 in Y
    dirs = [link % 4 for link, _ in route]
    assert dirs[:2] == [PLUS_X, PLUS_X] and len(route) == 4 and PLUS_Y not in dirs


def test_the_dateline_moves_a_route_to_pool_one_on_the_wrap_link():
    t = Torus(8, 8)
    pools = [pool for _, pool in t.route(t.node(6, 0), t.node(1, 0))]  # 6 -> 7 -> 0 -> 1
    assert pools == [0, 1, 1]


def test_half_way_ties_split_by_source_parity():
    assert ring_step(0, 4, 8) == 4 and ring_step(4, 0, 8) == 4  # (0,0) phase: clockwise
    assert ring_step(1, 5, 8) == -4 and ring_step(5, 1, 8) == -4  # (1,1): counterclockwise


def test_mean_route_is_n_over_two_hops_as_eq1_assumes():
    assert Torus(8, 8).hop_matrix.mean() == 4.0


def test_vectorized_routes_match_the_event_paths_routes():
    t = Torus(8, 8)
    src, dst = np.repeat(np.arange(64), 64), np.tile(np.arange(64), 64)
    table = route_links(t, src, dst)
    for s, d, row in zip(src.tolist(), dst.tolist(), table):
        assert [link for link, _ in t.route(s, d)] == [x for x in row.tolist() if x >= 0]


def test_vectorized_link_loads_equal_the_per_route_sum():
    # link_loads feeds the cost model; it is counted from ring routes weighted by row and
    # column sums and must equal adding every pair's bytes along its e-cube route one hop at
    # a time (square, non-square, one-row and two-row tori; a matrix of the first nodes only).
    for rows, cols, used in ((8, 8, 64), (16, 16, 256), (3, 5, 15), (2, 6, 12), (1, 4, 4), (5, 1, 5),
                             (4, 4, 11)):
        torus, rng = Torus(rows, cols), np.random.default_rng(rows * cols)
        m = rng.integers(0, 5000, (used, used))
        m[rng.random(m.shape) < 0.3] = 0
        want = np.zeros(torus.nlinks, dtype=np.int64)
        for s, d in zip(*np.nonzero(m)):
            for link, _ in torus.route(int(s), int(d)):
                want[link] += m[s, d]
        assert np.array_equal(torus.link_loads(m), want)
