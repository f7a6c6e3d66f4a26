"""Identification accuracy of kernel/explain on real kernel names gathered
from public sources (tests/data/kernel_names_eval.tsv: name, category,
origin, operation, source). Prints accuracy per origin family and every
miss; fails when category or origin accuracy falls below the target
(issue 17: >= 95% each), or when any family is below 80%."""
from __future__ import annotations

import collections
import csv
from pathlib import Path

import pytest

from nsys_rpc import Server

EVAL = Path(__file__).resolve().parents[1] / "data" / "kernel_names_eval.tsv"
# Held out: names recorded on an H200, origin from the library holding the
# symbol; the knowledge base was not written against them (only origin is
# labelled). Its target is lower: it measures what the KB has not seen.
H200 = Path(__file__).resolve().parents[1] / "data" / "kernel_names_h200.tsv"
H200_TARGET = 0.90
TARGET = 0.95
FAMILY_FLOOR = 0.80


def load_eval(path: Path = EVAL) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        lines = [l for l in f if not l.startswith("#")]
    rows = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    return rows


def test_eval_set_is_large_and_sourced():
    rows = load_eval()
    assert len(rows) >= 300, len(rows)
    assert len({r["name"] for r in rows}) == len(rows), "duplicate names"
    for r in rows:
        assert r["source"].strip(), f"no source for {r['name'][:80]}"
        assert r["category"] and r["origin"] and r["operation"], r


def evaluate(server: Server) -> tuple[dict, list]:
    per = collections.defaultdict(lambda: [0, 0, 0])  # n, category ok, origin ok
    misses = []
    for r in load_eval():
        res = server.request("kernel/explain", {"name": r["name"]})
        cat_ok = res["category"] == r["category"]
        ori_ok = res["origin"] == r["origin"]
        p = per[r["origin"]]
        p[0] += 1
        p[1] += cat_ok
        p[2] += ori_ok
        if not (cat_ok and ori_ok):
            misses.append((r["origin"], r["name"][:110], f"{res['origin']}/{res['category']}",
                           f"{r['origin']}/{r['category']}"))
    return per, misses


def format_table(per: dict, misses: list) -> str:
    out = [f"{'family':<16}{'n':>5}{'category':>10}{'origin':>9}"]
    tot = [0, 0, 0]
    for fam in sorted(per, key=lambda k: -per[k][0]):
        n, c, o = per[fam]
        tot = [tot[0] + n, tot[1] + c, tot[2] + o]
        out.append(f"{fam:<16}{n:>5}{100 * c / n:>9.1f}%{100 * o / n:>8.1f}%")
    n, c, o = tot
    out.append(f"{'ALL':<16}{n:>5}{100 * c / n:>9.1f}%{100 * o / n:>8.1f}%")
    for m in misses:
        out.append("MISS [%s] %s -> got %s, want %s" % m)
    return "\n".join(out)


def run_printed(capsys, evaluate_fn, format_fn) -> tuple[dict, str]:
    """Runs one evaluation on a fresh server and prints its table."""
    with Server() as s:
        per, misses = evaluate_fn(s)
    table = format_fn(per, misses)
    with capsys.disabled():
        print("\n" + table)
    return per, table


def test_identification_accuracy(capsys):
    per, table = run_printed(capsys, evaluate, format_table)
    n = sum(v[0] for v in per.values())
    cat = sum(v[1] for v in per.values()) / n
    ori = sum(v[2] for v in per.values()) / n
    assert cat >= TARGET and ori >= TARGET, table
    low = [f for f, (k, c, o) in per.items() if min(c, o) / k < FAMILY_FLOOR]
    assert not low, f"families below {FAMILY_FLOOR:.0%}: {low}\n{table}"


def evaluate_h200(server: Server) -> tuple[dict, list]:
    per = collections.defaultdict(lambda: [0, 0])
    misses = []
    for r in load_eval(H200):
        got = server.request("kernel/explain", {"name": r["name"]})["origin"]
        per[r["origin"]][0] += 1
        per[r["origin"]][1] += got == r["origin"]
        if got != r["origin"]:
            misses.append((r["origin"], r["name"][:110], got))
    return per, misses


def format_h200(per: dict, misses: list) -> str:
    out = [f"{'origin (H200, held out)':<24}{'n':>5}{'origin':>9}"]
    for fam in sorted(per, key=lambda k: -per[k][0]):
        n, o = per[fam]
        out.append(f"{fam:<24}{n:>5}{100 * o / n:>8.1f}%")
    n, o = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
    out.append(f"{'ALL':<24}{n:>5}{100 * o / n:>8.1f}%")
    out += ["MISS [%s] %s -> got %s" % m for m in misses]
    return "\n".join(out)


def test_h200_held_out(capsys):
    per, table = run_printed(capsys, evaluate_h200, format_h200)
    n, o = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
    assert n >= 300 and o / n >= H200_TARGET, table


if __name__ == "__main__":
    with Server() as s:
        print(format_table(*evaluate(s)))
        print(format_h200(*evaluate_h200(s)))
