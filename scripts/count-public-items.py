#!/usr/bin/env python3
# Usage: RUSTC_BOOTSTRAP=1 cargo rustdoc -p shamba --lib -- -Zunstable-options --output-format json
#        (the same for -p shamba-filter), then
#        scripts/count-public-items.py target/doc/shamba.json target/doc/shamba_filter.json
"""Count public items reachable from a crate's root in rustdoc JSON: modules, types, functions,
traits, constants, fields, variants and inherent/trait-declared methods; re-exported crates
and modules are followed (into the other crate's JSON when given)."""
import json, sys
docs = {}
for p in sys.argv[1:]:
    d = json.load(open(p)); docs[d["index"][str(d["root"])]["name"]] = d
def inner_kind(it):
    return next(iter(it["inner"].keys())) if isinstance(it["inner"], dict) else it["inner"]
seen = set(); counts = {}
def visit(doc, iid, pub_ctx=True):
    key = (id(doc), iid)
    if key in seen: return
    seen.add(key)
    it = doc["index"].get(str(iid))
    if it is None: return
    k = inner_kind(it); inner = it["inner"][k]
    if k == "use":
        tgt = inner.get("id")
        if tgt is not None and str(tgt) in doc["index"]:
            visit(doc, tgt); return
        # external: find by path in other crate
        src = inner.get("source", "")
        root = src.split("::")[0]
        if root in docs and root != doc["index"][str(doc["root"])]["name"]:
            od = docs[root]; parts = src.split("::")[1:]
            cur = od["root"]
            for part in parts:
                m = od["index"][str(cur)]
                kids = m["inner"]["module"]["items"]
                def nm(c):
                    it = od["index"].get(str(c), {})
                    if it.get("name"): return it["name"]
                    u = it.get("inner", {}).get("use") if isinstance(it.get("inner"), dict) else None
                    return u.get("name") if u else None
                nxt = [c for c in kids if nm(c) == part]
                if not nxt: return
                cur = nxt[0]
            if inner.get("is_glob"):
                for c in od["index"][str(cur)]["inner"]["module"]["items"]: visit(od, c)
            else: visit(od, cur)
        elif tgt is not None:
            # target in another crate's json by path lookup
            p = doc["paths"].get(str(tgt))
            if p and p["path"][0] in docs:
                od = docs[p["path"][0]]
                for cid, c in od["index"].items():
                    pass
        return
    if it.get("visibility") not in ("public", "default"): return
    counts[k] = counts.get(k, 0) + 1
    if k == "module":
        for c in inner["items"]: visit(doc, c)
    elif k == "struct":
        kind = inner["kind"]
        fields = kind.get("plain", {}).get("fields", []) if isinstance(kind, dict) else []
        if isinstance(kind, dict) and "tuple" in kind: fields = [f for f in kind["tuple"] if f is not None]
        for f in fields: visit(doc, f)
        for imp in inner["impls"]: visit_impl(doc, imp)
    elif k == "enum":
        for v in inner["variants"]: visit(doc, v)
        for imp in inner["impls"]: visit_impl(doc, imp)
    elif k == "trait":
        for c in inner["items"]: visit(doc, c)
def visit_impl(doc, imp):
    it = doc["index"].get(str(imp))
    if not it: return
    im = it["inner"]["impl"]
    if im.get("trait") is None and not im.get("is_synthetic") and not im.get("blanket_impl"):
        for c in im["items"]:
            ci = doc["index"].get(str(c))
            if ci and ci.get("visibility") == "public": visit(doc, c)
main = docs[list(docs)[0]]
visit(main, main["root"])
print(sum(counts.values()), dict(sorted(counts.items())))
