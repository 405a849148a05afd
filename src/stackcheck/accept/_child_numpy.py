"""Acceptance child (ACC001), run with ``python -c`` inside the checked interpreter: a NumPy
computation with answers known in advance. Standard library + numpy only; prints one JSON
object on its last stdout line. stackcheck need not be installed there."""

import json
import sys


def main():
    try:
        import numpy as np
    except ModuleNotFoundError as exc:
        if exc.name == "numpy":
            return {"missing": "numpy"}
        raise
    a = np.array([[4.0, -2.0, 1.0], [-2.0, 4.0, -2.0], [1.0, -2.0, 4.0]])
    x = np.linalg.solve(a, np.array([3.0, 0.0, 9.0]))  # a @ [1, 2, 3] == [3, 0, 9]
    small = np.arange(6.0).reshape(2, 3) @ np.arange(6.0).reshape(3, 2)
    n = 256
    big = np.ones((n, n)) @ np.full((n, n), 2.0)  # every entry is exactly 2n (BLAS path)
    errors = {
        "solve_3x3": float(np.max(np.abs(x - np.array([1.0, 2.0, 3.0])))),
        "matmul_2x3x2": float(np.max(np.abs(small - np.array([[10.0, 13.0], [28.0, 40.0]])))),
        "matmul_256": float(np.max(np.abs(big - 2.0 * n))),
    }
    blas = ""
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]["name"]
    except Exception:
        pass
    return {"numpy": np.__version__, "errors": errors, "blas": blas, "python": sys.version.split()[0]}


if __name__ == "__main__":
    print(json.dumps(main()))
