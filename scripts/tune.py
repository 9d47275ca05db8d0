#!/usr/bin/env python3
"""auto's rules as data: bench/results/<GPU>.auto.json, one file per GPU, hold every threshold and
cost-model weight the ops' `auto` reads (src/core/auto_rules.def lists each with its meaning); this
script derives the thresholds a sweep measures and turns the files into the compiled-in tables,
src/core/auto_rules_table.c.

usage:
  tune.py --derive [--device NAME] [--write]
                    derive every threshold in DERIVED from the device's sweeps in bench/results
                    and print each with the sizes it rests on and its worst regret on the sweep
                    (beside the committed rule's); --write stores them in <device>.auto.json (a
                    new device's file starts from the fallback's other numbers) and regenerates
                    the table
  tune.py --write   regenerate src/core/auto_rules_table.c from every bench/results/*.auto.json
  tune.py --check   exit 1 where a derived number differs from what its sweep gives, a field
                    lacks its line of provenance (or names a file that is not there), or the
                    committed table differs from what the files give (the test command runs
                    this, as it does report.py --check)

Exactly one file must say "fallback": true: its table serves the devices that have none. Each
file's "provenance" gives every field one line: the sweep under bench/results it was read from
(named without the device's stem), the script that made it, or what else it rests on (a kernel's
limit, hand runs whose timings lab/notes/auto.md keeps); docs/auto.md's table shows them.
A new GPU gets its own rules by running the sweeps DERIVED names there (`memhier bench conv1d
--grid ...`, saved as bench/results/<device>.<sweep>), then `--derive --device NAME --write` and a
rebuild; the numbers no sweep here derives (kernel limits, cost-model weights, accuracy bounds:
docs/auto.md says where each comes from) start as the fallback's. tests/test_auto_picks.c pins
the fallback table's picks."""
import argparse
import collections
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "src/core/auto_rules_table.c"

DEFS = ROOT / "src/core/auto_rules.def"
KINDS = {"NUMBER": "n", "INT": "i", "STEPS": "steps"}
RULE = re.compile(r'MH_RULE\(\s*(\w+),\s*(\w+),\s*(\w+),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)')


def rules():
    """auto_rules.def's fields in order: (json section, json key, C field, kind, meaning); kind "n"
    a number, "i" an int, "steps" a list of [samples or null, value or null] (null samples ends the
    list; null value: never)."""
    found = []
    for section, key, kind, meaning in RULE.findall(re.sub(r"/\*.*?\*/", "", DEFS.read_text(), flags=re.S)):
        if kind not in KINDS:
            raise ValueError(f"{DEFS.relative_to(ROOT)}: {section}.{key} has kind {kind}; expected one of {list(KINDS)}")
        found.append((section, key, f"{section}_{key}", KINDS[kind], "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', meaning))))
    return found


FIELDS = [field[:4] for field in rules()]
STEPS = 5  # MH_AUTO_STEPS

# Thresholds derived from a sweep: (section, key) -> the sweep file (bench/results/<device>.<file>,
# made by `command`), the row (or configuration) below the threshold, the one from it on, and the
# largest k the choice applies to (larger k are another rule's: the reg4096 segment holds k <= 2049).
DERIVED = {
    ("conv1d", "fused_from_k"): {
        "file": "conv1d-grid.json", "command": "memhier bench conv1d --grid --json FILE",
        "below": "conv1d/regtile", "from": "conv1d/fft-fused", "k_max": 2049},
    ("conv1d", "real8192_from_k"): {
        "file": "conv1d-fused-grid.json",
        "command": "memhier bench conv1d --grid --variants fft-fused --configs reg4096,reg8192,real8192 --json FILE",
        "below": "conv1d/fft-fused[reg4096]", "from": "conv1d/fft-fused[real8192]", "k_max": 2049},
}
# Two choices whose worst regrets on a size differ by less than this are equal: cells of a few
# microseconds move by more than 2% from run to run, so a sharper choice would follow the noise.
NOISE = 0.02


def c_string(s):
    return json.dumps(s)  # a JSON string of ASCII text is a valid C string literal


def c_number(v):
    if v is None:
        return "HUGE_VAL"
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        raise ValueError(f"not a finite number: {v!r}")
    return repr(float(v)) if not float(v).is_integer() else f"{float(v):.1f}"


def c_steps(steps, where):
    if not isinstance(steps, list) or not 1 <= len(steps) <= STEPS:
        raise ValueError(f"{where}: 1 to {STEPS} [samples, value] pairs")
    samples, values = [], []
    for i, pair in enumerate(steps):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError(f"{where}[{i}]: a [samples, value] pair")
        if pair[0] is None and i != len(steps) - 1:
            raise ValueError(f"{where}[{i}]: only the last step may leave samples open (null)")
        samples.append("0.0" if pair[0] is None else c_number(pair[0]))
        values.append(c_number(pair[1]))
    if steps[-1][0] is not None:
        raise ValueError(f"{where}: the last step's samples must be null (every larger problem)")
    pad = STEPS - len(steps)
    return "{{" + ", ".join(samples + ["0.0"] * pad) + "}, {" + ", ".join(values + [values[-1]] * pad) + "}}"


def table_of(path):
    doc = json.loads(path.read_text())
    lines = [f"    {{.device = {c_string(doc['device'])},", f"     .source = {c_string(doc['source'])},",
             f"     .fallback = {1 if doc.get('fallback') else 0},"]
    for section, key, field, kind in FIELDS:
        where = f"{path.name}: {section}.{key}"
        if section not in doc or key not in doc[section]:
            raise ValueError(f"{where} is missing")
        v = doc[section][key]
        if kind == "steps":
            text = c_steps(v, where)
        elif kind == "i":
            if not isinstance(v, int) or isinstance(v, bool):
                raise ValueError(f"{where}: an integer")
            text = str(v)
        else:
            text = c_number(v)
        lines.append(f"     .{field} = {text},")
    lines[-1] = lines[-1].rstrip(",") + "},"
    return "\n".join(lines), bool(doc.get("fallback"))


def file_stem(device):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", device)


def sweep_cells(path, spec):
    """{size: {k: (ms below, ms from)}} for the cells where both were measured"""
    cells = collections.defaultdict(dict)
    for row in json.loads(path.read_text())["rows"]:
        if row.get("status") != "ok" or row["variant"] not in (spec["below"], spec["from"]):
            continue
        w = dict(kv.split("=", 1) for kv in row["workload"].split())
        n, k = int(w["n"]), int(w["k"])
        if k <= spec["k_max"]:
            cells[n].setdefault(k, {})[row["variant"]] = row["ms"]
    return {n: {k: (t[spec["below"]], t[spec["from"]]) for k, t in sorted(ks.items()) if len(t) == 2}
            for n, ks in sorted(cells.items())}


def regret(cells, threshold):
    """(worst, summed excess) time of taking `from` for k >= threshold, against the faster of the two"""
    ratios = [(f if k >= threshold else b) / min(b, f) for k, (b, f) in cells.items()]
    return max(ratios), sum(r - 1 for r in ratios)


def step_value(ks, j):
    """the threshold that choice j stands for: from ks[j], between the grid's ks[j-1] and ks[j]"""
    if j == len(ks):
        return None
    return ks[0] if j == 0 else (ks[j - 1] + ks[j]) // 2 + 1


def derive_steps(cells):
    """The steps (samples bound, k) of a threshold that falls as a problem grows. Candidate j takes
    `from` for k >= ks[j] (j = len(ks): never). Each size accepts the candidates whose worst regret
    is within NOISE of its best; consecutive sizes share a step while they accept a common one, and
    a step takes the one of those with the least summed regret. Bounds between steps are the
    geometric mean of the sizes either side."""
    ks = sorted({k for c in cells.values() for k in c})
    bands = []
    for n, c in cells.items():
        scores = [regret(c, math.inf if j == len(ks) else ks[j]) for j in range(len(ks) + 1)]
        best = min(w for w, _ in scores)
        ok = {j for j, (w, _) in enumerate(scores) if w <= best + NOISE}
        if bands and bands[-1]["ok"] & ok:
            bands[-1]["ok"] &= ok
            bands[-1]["sizes"].append((n, scores))
        else:
            bands.append({"ok": ok, "sizes": [(n, scores)]})
    if len(bands) > STEPS:
        raise ValueError(f"{len(bands)} steps needed, the table holds {STEPS}")
    steps, notes = [], []
    for i, band in enumerate(bands):
        j = min(band["ok"], key=lambda j: (sum(sc[j][1] for _, sc in band["sizes"]), j))
        last = i == len(bands) - 1
        bound = None if last else math.sqrt(band["sizes"][-1][0] * bands[i + 1]["sizes"][0][0])
        steps.append([None if bound is None else round(bound), step_value(ks, j)])
        notes.append((steps[-1], [n for n, _ in band["sizes"]], max(sc[j][0] for _, sc in band["sizes"])))
    return steps, notes


def rule_regret(cells, steps):
    """worst regret over the sweep of a committed steps rule"""
    worst = 1.0
    for n, c in cells.items():
        for bound, value in steps:
            if bound is None or n < bound:
                worst = max(worst, regret(c, math.inf if value is None else value)[0])
                break
    return worst


def derivations(device):
    """{(section, key): (steps, notes, cells)} for each DERIVED sweep the device has"""
    out = {}
    for (section, key), spec in DERIVED.items():
        path = ROOT / "bench/results" / f"{file_stem(device)}.{spec['file']}"
        if path.exists():
            cells = sweep_cells(path, spec)
            out[(section, key)] = (*derive_steps(cells), cells, path)
    return out


def auto_files():
    return {json.loads(f.read_text())["device"]: f for f in sorted((ROOT / "bench/results").glob("*.auto.json"))}


def show_steps(steps):
    return ", ".join(f"{'never' if v is None else v}" + ("" if b is None else f" below {b}") for b, v in steps)


def derive(device, write):
    files = auto_files()
    fallback = next(f for f in files.values() if json.loads(f.read_text()).get("fallback"))
    path = files.get(device, ROOT / "bench/results" / f"{file_stem(device)}.auto.json")
    doc = json.loads((path if path.exists() else fallback).read_text())
    found = derivations(device)
    if not found:
        raise ValueError(f"no sweep of {device!r} in bench/results: DERIVED names "
                         + ", ".join(f"<device>.{s['file']} ({s['command']})" for s in DERIVED.values()))
    for (section, key), (steps, notes, cells, sweep) in found.items():
        print(f"{section}.{key} from {sweep.relative_to(ROOT)}:")
        for step, sizes, worst in notes:
            print(f"  {show_steps([step])}: sizes {', '.join(str(n) for n in sizes)}; worst regret {worst:.3f}")
        committed = doc[section][key]
        print(f"  committed: {show_steps(committed)}; worst regret {rule_regret(cells, committed):.3f}")
        print(f"  derived:   {show_steps(steps)}; worst regret {rule_regret(cells, steps):.3f}")
        doc[section][key] = steps
    if write:
        if path.exists():
            text = path.read_text()
        else:
            given = doc["device"]
            doc["device"], doc["fallback"] = device, False
            doc["source"] = "derived: " + ", ".join(f"{s}.{k}" for s, k in found) + "; the rest from the fallback's"
            doc["provenance"] = {name: f"the fallback's number ({given}): {qualified(line, file_stem(given))}"
                                 for name, line in doc.get("provenance", {}).items()}
            text = json.dumps(doc, indent=1) + "\n"
        for (section, key), (steps, *_rest) in found.items():
            text = set_field(text, key, steps)
            text = set_provenance(text, f"{section}.{key}", provenance_line(section, key))
        path.write_text(text)
        print(f"tune: wrote {path.relative_to(ROOT)}")
    return doc


def set_field(text, key, steps):
    """the file's text with `key`'s list replaced (the rest of the file kept as written)"""
    line = "[" + ", ".join(json.dumps(pair) for pair in steps) + "]"
    pattern = re.compile(r'("' + re.escape(key) + r'":\s*)\[(?:[^\[\]]|\[[^\[\]]*\])*\]')
    text, count = pattern.subn(lambda m: m.group(1) + line, text)
    if count != 1:
        raise ValueError(f"{key} appears {count} times in the file")
    return text


PROVENANCE_FILE = re.compile(r"(?<![\w./-])[\w.-]+\.(?:json|txt)\b")  # a sweep's name, not a path's end
PROVENANCE_PATH = re.compile(r"\b(?:lab/(?:scripts|notes|results)|scripts)/[\w./-]+\.(?:py|sh|md|cu|txt|json)\b")


def qualified(line, stem):
    """A line of provenance with the sweeps it names by their device-less names given their device's
    stem (a line copied into another device's file still names the files it was read from)."""
    def full(m):
        name = m.group(0)
        return f"{stem}.{name}" if not (ROOT / "bench/results" / name).exists() else name
    return PROVENANCE_FILE.sub(full, line)


def provenance_line(section, key):
    """A derived field's line of provenance."""
    spec = DERIVED[(section, key)]
    return f"derived: scripts/tune.py --derive from {spec['file']} ({spec['command'].replace(' --json FILE', '')})"


def provenance_problems(path, doc):
    """messages for every field of auto_rules.def without one line of provenance in the file, a
    line for no field, a file or script a line names that is not in the repository, and a derived
    field whose line is not its derivation's"""
    lines, bad = doc.get("provenance", {}), []
    names = {f"{section}.{key}" for section, key, _field, _kind in FIELDS}
    for name in sorted(names - lines.keys()):
        bad.append(f"{path.name}: {name} has no line in \"provenance\"")
    for name in sorted(lines.keys() - names):
        bad.append(f"{path.name}: \"provenance\" names {name}, which auto_rules.def does not hold")
    stem = file_stem(doc["device"])
    for name, line in sorted(lines.items()):
        if not isinstance(line, str) or not line.strip() or "\n" in line:
            bad.append(f"{path.name}: {name}'s provenance is not one line of text")
            continue
        for f in PROVENANCE_FILE.findall(line):
            if not any((ROOT / "bench/results" / n).exists() for n in (f"{stem}.{f}", f)):
                bad.append(f"{path.name}: {name}'s provenance names {f}, not in bench/results")
        for f in PROVENANCE_PATH.findall(line):
            if not (ROOT / f).exists():
                bad.append(f"{path.name}: {name}'s provenance names {f}, not in the repository")
    for (section, key), spec in DERIVED.items():
        name = f"{section}.{key}"
        if (ROOT / "bench/results" / f"{stem}.{spec['file']}").exists() and lines.get(name) != provenance_line(
                section, key):
            bad.append(f"{path.name}: {name} is derived from {spec['file']}; its provenance should say so")
    return bad


def set_provenance(text, name, line):
    """the file's text with `name`'s line of provenance replaced (the rest kept as written)"""
    pattern = re.compile(r'("' + re.escape(name) + r'":\s*)"(?:[^"\\]|\\.)*"')
    text, count = pattern.subn(lambda m: m.group(1) + json.dumps(line), text)
    if count != 1:
        raise ValueError(f"{name}'s provenance appears {count} times in the file")
    return text


def check_derived():
    """messages for every derived number that differs from what its sweep gives"""
    bad = []
    for device, f in auto_files().items():
        doc = json.loads(f.read_text())
        for (section, key), (steps, *_rest) in derivations(device).items():
            if doc[section][key] != steps:
                bad.append(f"{f.name}: {section}.{key} is {doc[section][key]}, its sweep gives {steps}")
        bad += provenance_problems(f, doc)
    return bad


def generate():
    files = sorted((ROOT / "bench/results").glob("*.auto.json"))
    tables, fallbacks = [], 0
    for f in files:
        text, fb = table_of(f)
        tables.append(f"    /* {f.relative_to(ROOT)} */\n" + text)
        fallbacks += fb
    if fallbacks != 1:
        raise ValueError(f"{fallbacks} files say \"fallback\": true; exactly one must")
    return (
        "/* Generated by `python3 scripts/tune.py --write` from bench/results/<GPU>.auto.json: do not edit\n"
        " * (src/core/auto_rules.h says what each field is). */\n"
        "#include \"auto_rules.h\"\n\n#include <math.h>\n#include <string.h>\n\n"
        "static const mh_auto_rules tables[] = {\n" + "\n".join(tables) + "\n};\n\n"
        "const mh_auto_rules *mh_auto_rules_at(size_t i, size_t *count)\n{\n"
        "    *count = sizeof tables / sizeof tables[0];\n    return i < *count ? &tables[i] : NULL;\n}\n\n"
        "const mh_auto_rules *mh_auto_rules_for(const char *name)\n{\n"
        "    const mh_auto_rules *fallback = &tables[0];\n"
        "    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; ++i) {\n"
        "        if (name && !strcmp(tables[i].device, name)) return &tables[i];\n"
        "        if (tables[i].fallback) fallback = &tables[i];\n    }\n    return fallback;\n}\n\n"
        "double mh_auto_step(const mh_auto_steps *s, double samples)\n{\n"
        "    for (int i = 0; i < MH_AUTO_STEPS; ++i)\n"
        "        if (s->samples[i] == 0.0 || samples < s->samples[i]) return s->value[i];\n"
        "    return s->value[MH_AUTO_STEPS - 1];\n}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--derive", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--device", help="with --derive: the GPU's name (default: the fallback's)")
    a = ap.parse_args()
    if not (a.check or a.derive or a.write) or (a.check and a.write) or (a.device and not a.derive):
        ap.error("one of --write, --check, --derive [--device NAME] [--write]")
    try:
        if a.derive:
            device = a.device or next(d for d, f in auto_files().items()
                                      if json.loads(f.read_text()).get("fallback"))
            derive(device, a.write)
            if not a.write:
                return 0
        text = generate()
        bad = check_derived() if a.check else []
    except (ValueError, KeyError, json.JSONDecodeError) as e:
        print(f"tune: {e}", file=sys.stderr)
        return 1
    if bad:
        print("tune: " + "\n      ".join(bad) + "\n      a derived number or its line: run `python3 scripts/tune.py "
              "--derive --write` and commit; any other line of provenance: edit the file", file=sys.stderr)
        return 1
    if a.write:
        TABLE.write_text(text)
        print(f"tune: wrote {TABLE.relative_to(ROOT)}")
        return 0
    if not TABLE.exists() or TABLE.read_text() != text:
        print(f"tune: {TABLE.relative_to(ROOT)} differs from what bench/results/*.auto.json give; "
              "run `python3 scripts/tune.py --write` and commit", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
