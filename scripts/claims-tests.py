#!/usr/bin/env python3
"""Rewrites the tests column of docs/claims.md from the test files.

A test shows claim XNN when its name starts with TestXNN_ (or FuzzXNN_), or
when its doc comment says "claim XNN". Run from anywhere:

    python3 scripts/claims-tests.py && git diff docs/claims.md
"""
import os, re, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
found = {}
for dp, dn, fn in os.walk(root):
    dn[:] = [d for d in dn if not d.startswith(".")]
    for f in fn:
        if not f.endswith("_test.go"):
            continue
        path = os.path.join(dp, f)
        pkg = os.path.relpath(dp, root)
        lines = open(path, encoding="utf-8").read().split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"func ((Test|Fuzz)\w+)\(", line)
            if not m:
                continue
            name, ids = m.group(1), set()
            m2 = re.match(r"(Test|Fuzz)([TCEXS]\d\d)_", name)
            if m2:
                ids.add(m2.group(2))
            j = i - 1
            while j >= 0 and lines[j].startswith("//"):
                ids.update(re.findall(r"\bclaim ([TCEXS]\d\d)\b", lines[j]))
                j -= 1
            for cid in ids:
                found.setdefault(cid, {}).setdefault(pkg, set()).add(name)

claims = os.path.join(root, "docs", "claims.md")
out = []
for line in open(claims, encoding="utf-8").read().split("\n"):
    m = re.match(r"^\| ([TCEXS]\d\d) \| (.*) \| [^|]* \|$", line)
    if m:
        cid = m.group(1)
        tests = "; ".join(
            f"`{pkg}`: " + ", ".join(sorted(names))
            for pkg, names in sorted(found.get(cid, {}).items())
        ) or "none yet"
        line = f"| {cid} | {m.group(2)} | {tests} |"
    out.append(line)
open(claims, "w", encoding="utf-8").write("\n".join(out))
missing = sorted(c for c in found if not re.search(rf"^\| {c} \|", "\n".join(out), re.M))
for c in missing:
    print(f"claim {c} has tests but no row in docs/claims.md", file=sys.stderr)
sys.exit(1 if missing else 0)
