#!/usr/bin/python3
"""Checks of htrace-report's efficiency metrics and CSV shared by efficiency_case.py and
wait_states_case.py: the model's identities, and the rows --format csv should hold for a
--format json document."""
import math

METRICS = ("parallel_efficiency", "load_balance", "communication_efficiency",
           "serialization_efficiency", "transfer_efficiency")


def check_identities(expect, e, label):
    """Every metric in [0, 1]; PE = LB x CommE and CommE = SerE x TrfE to the last bit (the
    report computes them as these products)."""
    for m in METRICS:
        expect(e[m] is not None and 0 <= e[m] <= 1, "%s: %s is %s" % (label, m, e[m]))
    if any(e[m] is None for m in METRICS):
        return
    expect(e["parallel_efficiency"] == e["load_balance"] * e["communication_efficiency"],
           "%s: PE %r is not LB x CommE %r" % (label, e["parallel_efficiency"],
                                               e["load_balance"] * e["communication_efficiency"]))
    expect(e["communication_efficiency"] == e["serialization_efficiency"] * e["transfer_efficiency"],
           "%s: CommE %r is not SerE x TrfE" % (label, e["communication_efficiency"]))
    expect(math.isclose(e["communication_efficiency"], e["max_useful_ns"] / e["runtime_ns"], rel_tol=1e-12),
           "%s: CommE %r is not max useful / runtime" % (label, e["communication_efficiency"]))
    for i, l in enumerate(e["locations"]):
        expect(0 <= l["waiting_ns"] <= l["mpi_ns"] and l["useful_ns"] >= 0
               and l["useful_ns"] + l["mpi_ns"] <= e["runtime_ns"],
               "%s: location %d: %s in a runtime of %d ns" % (label, i, l, e["runtime_ns"]))


def json_rows(doc, archive_label="archive"):
    """The rows --format csv should hold for an analysis of the JSON document."""
    rows = []
    for key, p in doc["wait_states"].items():
        for field in ("total_ns", "calls", "longest_ns"):
            rows.append((archive_label, "wait_states", "run", key, field, "", str(p[field])))
        for split in ("by_location", "caused_by"):
            # (The CSV leaves out the locations with 0 ns.)
            rows += [(archive_label, "wait_states", "run", key, split, str(i), str(v))
                     for i, v in enumerate(p[split]) if v != 0]
        for split, name in (("by_region", "region"), ("by_comm", "comm")):
            rows += [(archive_label, "wait_states", "run", key, split, e[name], str(e["ns"])) for e in p[split]]
    for scope in ("run", "window"):
        e = doc["efficiency"][scope]
        if e is None:
            continue
        for k, v in e.items():
            if k == "locations":
                for i, l in enumerate(v):
                    for f, x in l.items():
                        rows.append((archive_label, "efficiency", scope, "locations", f, str(i),
                                     ("true" if x else "false") if isinstance(x, bool) else str(x)))
            else:
                rows.append((archive_label, "efficiency", scope, k, "", "", "" if v is None else
                             (repr(v) if isinstance(v, float) else str(v))))
    return rows


def csv_rows(table):
    """CSV rows as tuples, floats normalised to Python's repr (the same double, any spelling)."""
    out = []
    for row in table:
        value = row[6]
        try:
            if row[1] == "efficiency" and any(c in value for c in ".e") and value not in ("true", "false"):
                value = repr(float(value))
        except ValueError:
            pass
        out.append(tuple(row[:6]) + (value,))
    return out
