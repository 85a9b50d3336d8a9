"""Linear time, checked as a ratio of two input sizes rather than a time limit: a fast
machine makes both quicker, a quadratic algorithm still makes the ratio grow."""

import time


def best_of(run, repeats: int = 5, loops: int = 1) -> float:
    """The quickest of ``repeats`` timings of ``loops`` calls: the least disturbed."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(loops):
            run()
        best = min(best, time.perf_counter() - started)
    return best


def ratio(larger, smaller, *, repeats: int = 5) -> float:
    """How many times longer ``larger`` takes than ``smaller`` (each the quickest of a
    few runs, each run long enough, about 20 ms or more, to time well)."""
    loops = 1
    while best_of(smaller, 1, loops) < 0.02 and loops < 10_000:
        loops *= 4
    return best_of(larger, repeats, loops) / best_of(smaller, repeats, loops)
