#!/usr/bin/env python3
"""auto's rules as data: bench/results/<GPU>.auto.json, one file per GPU, hold every threshold and
cost-model weight the ops' `auto` reads (src/core/auto_rules.h says what each one is); this
script turns them into the compiled-in tables, src/core/auto_rules_table.c.

usage:
  tune.py --write   regenerate src/core/auto_rules_table.c from every bench/results/*.auto.json
  tune.py --check   exit 1 where the committed table differs from what the files give (the test
                    command runs this, as it does report.py --check)

Exactly one file must say "fallback": true: its table serves the devices that have none.
A new GPU gets its own rules by a new file (measured with the sweeps its "source" names), then
--write and a rebuild; tests/test_auto_picks.c pins the fallback table's picks."""
import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "src/core/auto_rules_table.c"

# (json section, json key, C field, kind): kind "n" a number, "i" an int, "steps" a list of
# [samples or null, value or null] (null samples ends the list; null value: never)
FIELDS = [
    ("conv1d", "fft_os_above_k", "conv1d_fft_os_above_k", "n"),
    ("conv1d", "fused_above_k", "conv1d_fused_above_k", "n"),
    ("conv1d", "fused_from_k", "conv1d_fused_from_k", "steps"),
    ("conv1d", "real8192_from_k", "conv1d_real8192_from_k", "steps"),
    ("conv2d", "tc_min_outputs", "conv2d_tc_min_outputs", "n"),
    ("conv2d", "tc_min_taps", "conv2d_tc_min_taps", "n"),
    ("conv2d", "tc_any_taps_outputs", "conv2d_tc_any_taps_outputs", "n"),
    ("conv2d", "tc_share_s4_q8", "conv2d_tc_share_s4_q8", "n"),
    ("conv2d", "tc_share_s4_q16", "conv2d_tc_share_s4_q16", "n"),
    ("conv2d", "tc_share_s2_q8", "conv2d_tc_share_s2_q8", "n"),
    ("conv2d", "tc_share_s2_q16", "conv2d_tc_share_s2_q16", "n"),
    ("conv2d", "tc_share_s2_q16_one_slice", "conv2d_tc_share_s2_q16_one_slice", "n"),
    ("conv2d", "tc_q16_from_slices", "conv2d_tc_q16_from_slices", "i"),
    ("conv2d", "tc_q16_s2_from_rows", "conv2d_tc_q16_s2_from_rows", "i"),
    ("matmul", "tc_min_k", "matmul_tc_min_k", "n"),
    ("matmul", "tc_max_k", "matmul_tc_max_k", "n"),
    ("matmul", "tc_min_work", "matmul_tc_min_work", "n"),
    ("matmul", "tc_min_outputs", "matmul_tc_min_outputs", "n"),
    ("matmul", "wgmma_round_256", "matmul_wgmma_round_256", "n"),
    ("matmul", "wgmma_round_128", "matmul_wgmma_round_128", "n"),
    ("matmul", "wgmma_round_64", "matmul_wgmma_round_64", "n"),
    ("matmul", "wgmma_pairs_min_k", "matmul_wgmma_pairs_min_k", "n"),
    ("histogram", "lane_private_above_bins", "histogram_lane_private_above_bins", "i"),
]
STEPS = 4  # MH_AUTO_STEPS


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
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    a = ap.parse_args()
    try:
        text = generate()
    except (ValueError, KeyError, json.JSONDecodeError) as e:
        print(f"tune: {e}", file=sys.stderr)
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
