"""Sports analytics: Elo ratings over a season of games, a Pythagorean win expectation per
team from a score table, and a running plus-minus with the best stretch."""

import numpy as np

from corpus import Program


def elo_season(home, away, home_won, n_teams, k):
    rating = np.full(n_teams, 1500.0)
    history = np.zeros(len(home))
    for g in range(len(home)):
        h, a = home[g], away[g]
        expected = 1.0 / (1.0 + 10 ** ((rating[a] - rating[h] - 50.0) / 400.0))
        delta = k * (home_won[g] - expected)
        rating[h] += delta
        rating[a] -= delta
        history[g] = abs(delta)
    order = np.argsort(-rating, kind="stable")
    return rating, order, history


def pythagorean(points_for, points_against, exponent):
    pf = points_for.sum(axis=1)
    pa = points_against.sum(axis=1)
    exp_win = np.zeros(len(pf))
    played = (pf + pa) > 0
    exp_win[played] = pf[played] ** exponent / (pf[played] ** exponent + pa[played] ** exponent)
    return exp_win, np.where(exp_win > 0.5, 1, 0)


def best_stretch(plus_minus):
    # Kadane: the best run of consecutive games, with its start and end
    best, cur = 0, 0
    start, best_start, best_end = 0, 0, 0
    for i in range(len(plus_minus)):
        if cur <= 0:
            cur = plus_minus[i]
            start = i
        else:
            cur += plus_minus[i]
        if cur > best:
            best = cur
            best_start, best_end = start, i + 1
    running = np.cumsum(plus_minus)
    return best, best_start, best_end, running


PROGRAMS = [
    Program(elo_season, lambda n, rng: (rng.integers(0, 6, 4 * n), (rng.integers(0, 6, 4 * n) + 1) % 6,
                                        rng.integers(0, 2, 4 * n).astype(np.float64), 6, 20.0)),
    Program(pythagorean, lambda n, rng: (rng.integers(0, 40, (n, 5)).astype(np.float64),
                                         rng.integers(0, 40, (n, 5)).astype(np.float64), 2.37)),
    Program(best_stretch, lambda n, rng: (rng.integers(-12, 13, n),)),
]
