# Per-level bytes written (MiB) and compaction bytes per put of each sustained run in
# shamba-compare --json outputs: python3 levels.py align-1.json ...
import json, sys


def runs(o):
    """Every record with an `end` write-counter block, wherever the JSON keeps it."""
    if isinstance(o, dict):
        if "end" in o and "engine" in o:
            return [o]
        return [r for v in o.values() for r in runs(v)]
    if isinstance(o, list):
        return [r for v in o for r in runs(v)]
    return []


for path in sys.argv[1:]:
    for r in runs(json.load(open(path))):
        detail = dict(r["end"]["detail"])
        puts = r.get("puts")
        written = r["end"].get("compaction_bytes")
        levels = " ".join(f"{k[8:]}={v / 2**20:.0f}" for k, v in detail.items() if k.startswith("written_l") and v)
        per_put = round(written / puts) if written and puts else None
        print(path, r["engine"], r.get("value_size"), "puts", puts, "comp B/put", per_put, levels)
