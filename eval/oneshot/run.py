#!/usr/bin/env python3
"""One-shot search against ripgrep (issue 65, item 2).

Times `cairn search -n 10 QUERY` with no daemon, from process start to exit,
against `rg -n QUERY .` in the same tree: each query REPEAT times, the
programs interleaved (query by query, run by run) so that a busy host slows
every program alike. Prints p50 / p95 in ms per program and the ratio of
each cairn build's p50 to rg's.

    python3 eval/oneshot/run.py --tree DIR --cairn BIN [--cairn BIN2 …]

DIR must already be indexed (`cairn index` in it). The ten queries were
written before any run and are the ones BENCHMARKS.md reports.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

QUERIES = [
    "fixture scope",
    "monkeypatch setattr",
    "parametrize ids",
    "tmp_path_factory",
    "assertion rewriting",
    "junitxml report",
    "capture stdout fd",
    "skip marker condition",
    "conftest plugin loading",
    "approx",
]


def timed(cmd, cwd, env):
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000.0
    # rg exits 1 when nothing matches; cairn must succeed.
    if done.returncode not in (0, 1) or (cmd[0] != "rg" and done.returncode != 0):
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return elapsed


def p95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", required=True, help="an indexed project")
    ap.add_argument("--cairn", action="append", required=True, help="a cairn binary (repeat to compare builds)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-rg", action="store_true", help="time cairn only")
    args = ap.parse_args()
    env = dict(os.environ, CAIRN_NO_DAEMON="1")
    env.pop("CAIRN_LOG", None)
    programs = [(b, [os.path.abspath(b), "-q", "search", "-n", "10"]) for b in args.cairn]
    if not args.no_rg:
        programs.append(("rg", ["rg", "-n"]))
    times = {name: [] for name, _ in programs}
    # One untimed round first: the page cache holds the index, the model and rg's files.
    for q in QUERIES:
        for _, cmd in programs:
            timed(cmd + [q] + (["."] if cmd[0] == "rg" else []), args.tree, env)
    for _ in range(args.repeat):
        for q in QUERIES:
            for name, cmd in programs:
                times[name].append(timed(cmd + [q] + (["."] if cmd[0] == "rg" else []), args.tree, env))
    rg = statistics.median(times["rg"]) if "rg" in times else None
    for name, xs in times.items():
        p50 = statistics.median(xs)
        ratio = f"  {p50 / rg:.1f}x rg" if rg and name != "rg" else ""
        print(f"{name}: p50 {p50:.1f} ms, p95 {p95(xs):.1f} ms ({len(xs)} runs){ratio}")


if __name__ == "__main__":
    main()
