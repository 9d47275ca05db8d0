#!/usr/bin/env python3
"""scripts/tune.py: the derivation of auto's thresholds from a sweep, on grids whose answer is
known, and --check's refusal of a derived number that its sweep does not give and of a field
whose line of provenance is missing, wrong or names a file that is not there."""
import importlib.util
import json
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("tune", ROOT / "scripts/tune.py")
tune = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tune)

KS = [3, 15, 31, 63, 127, 255, 511]
failures = []


def expect(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def cells(crossover_of_n, sizes=(4096, 65536, 1048576, 16777216), noise=None):
    """regtile costs k, fft-fused a flat crossover(n): fused is faster from k > crossover(n)"""
    out = {}
    for n in sizes:
        c = crossover_of_n(n)
        out[n] = {k: (1.0 + k, 1.0 + c) for k in KS}
    return out


# One crossover for every size: one step, between the grid's k either side of it.
steps, _ = tune.derive_steps(cells(lambda n: 100))
expect("one crossover", steps, [[None, (63 + 127) // 2 + 1]])
# A crossover that falls with the size: a step per size, bounds at the geometric means.
steps, _ = tune.derive_steps(cells(lambda n: {4096: 400, 65536: 100, 1048576: 40, 16777216: 20}[n]))
expect("falling crossover", steps,
       [[round(math.sqrt(4096 * 65536)), 384], [round(math.sqrt(65536 * 1048576)), 96],
        [round(math.sqrt(1048576 * 16777216)), 48], [None, 24]])
# Never faster: never; always faster: from the smallest k of the grid.
expect("never", tune.derive_steps(cells(lambda n: 10**6))[0], [[None, None]])
expect("always", tune.derive_steps(cells(lambda n: 0))[0], [[None, 3]])
# Sizes whose crossovers differ by less than the noise share one step.
near = cells(lambda n: 100)
near[65536][127] = (128.0, 128.0 * (1 + tune.NOISE / 2))  # fused a hair slower at k = 127 there
expect("within the noise", len(tune.derive_steps(near)[0]), 1)
# Regret of a rule: taking fused below its crossover costs the ratio.
expect("regret", tune.regret({3: (1.0, 2.0), 511: (4.0, 2.0)}, 3)[0], 2.0)
# More steps than the table holds (tune.STEPS: 5) is an error, never a silent truncation.
try:
    tune.derive_steps(cells(lambda n: {4096: 400, 65536: 200, 1048576: 100, 16777216: 40, 2**28: 20}[n],
                            sizes=(4096, 65536, 1048576, 16777216, 2**28)) | {
        2**30: {k: (1.0 + k, 1.0 + 8) for k in KS}})
    failures.append("six steps: no error")
except ValueError:
    pass

# set_field replaces one key's list and keeps the rest of the file as written.
text = '{\n "a": {\n  "x": [[1, 2], [null, 3]],\n  "y": 4e8\n }\n}\n'
expect("set_field", tune.set_field(text, "x", [[None, 5]]), text.replace("[[1, 2], [null, 3]]", "[[null, 5]]"))

# --check refuses a committed number that its sweep does not give: run the real files through
# check_derived, then the same with one derived number changed.
expect("committed files", tune.check_derived(), [])
with tempfile.TemporaryDirectory() as tmp:
    results = Path(tmp) / "bench/results"
    results.mkdir(parents=True)
    for f in (ROOT / "bench/results").glob("NVIDIA_H100_80GB_HBM3.*"):
        (results / f.name).write_bytes(f.read_bytes())
    for part in ("scripts", "lab"):  # what the lines of provenance name besides the sweeps
        (Path(tmp) / part).symlink_to(ROOT / part)
    auto = results / "NVIDIA_H100_80GB_HBM3.auto.json"
    committed = json.loads(auto.read_text())
    tune.ROOT = Path(tmp)

    def check_with(change):
        doc = json.loads(json.dumps(committed))
        change(doc)
        auto.write_text(json.dumps(doc))
        return tune.check_derived()
    expect("the files copied", check_with(lambda doc: None), [])
    bad = check_with(lambda doc: doc["conv1d"]["fused_from_k"][0].__setitem__(1, doc["conv1d"]["fused_from_k"][0][1] + 1))
    expect("a moved threshold", len(bad) == 1 and "fused_from_k" in bad[0], True)
    # every field has one line of provenance, naming files that are there; a derived field's says so
    bad = check_with(lambda doc: doc["provenance"].pop("conv2d.walk7_min_outputs"))
    expect("a field without provenance", len(bad) == 1 and "walk7_min_outputs has no line" in bad[0], True)
    bad = check_with(lambda doc: doc["provenance"].__setitem__("matmul.tc_min_k", "conv2d-nonesuch-grid.json"))
    expect("a sweep that is not there", len(bad) == 1 and "conv2d-nonesuch-grid.json" in bad[0], True)
    bad = check_with(lambda doc: doc["provenance"].__setitem__("matmul.tc_min_k", "lab/notes/nonesuch.md"))
    expect("a note that is not there", len(bad) == 1 and "lab/notes/nonesuch.md" in bad[0], True)
    bad = check_with(lambda doc: doc["provenance"].__setitem__("conv1d.fused_from_k", "read off a plot"))
    expect("a derived field's line", len(bad) == 1 and "is derived from conv1d-grid.json" in bad[0], True)
    bad = check_with(lambda doc: doc["provenance"].__setitem__("conv2d.nonesuch", "conv2d-auto-grid.json"))
    expect("a line for no field", len(bad) == 1 and "conv2d.nonesuch" in bad[0], True)
    # a line copied into a new device's file names the fallback's sweeps by their full names
    expect("qualified", tune.qualified("conv2d-auto-grid.json and the full run (NVIDIA_H100_80GB_HBM3.json)",
                                       "NVIDIA_H100_80GB_HBM3"),
           "NVIDIA_H100_80GB_HBM3.conv2d-auto-grid.json and the full run (NVIDIA_H100_80GB_HBM3.json)")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("tune: derivation and check as expected")
