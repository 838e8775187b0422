"""The conda stand-in's solver (imported by ./conda): MatchSpecs and versions as conda reads them,
and a small backtracking solver over a channel's repodata records. A failure names the chain of
specs that clash, as conda's UnsatisfiableError does.
"""
import re


# --- versions and match specs -------------------------------------------------------------
def vkey(v):
    return [int(p) if p.isdigit() else -1 for p in re.split(r"[.+_-]", v)]


def match_one(version, c):
    c = c.strip()
    if not c or c == "*":
        return True
    m = re.match(r"^(>=|<=|==|!=|>|<|=)?(.+)$", c)
    op, want = m.group(1) or "", m.group(2)
    if op in ("", "=") or want.endswith("*"):
        want = want.rstrip("*").rstrip(".")
        return version == want or version.startswith(want + ".")
    a, b = vkey(version), vkey(want)
    return {">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b, "==": a == b, "!=": a != b}[op]


def match(version, constraint):
    return all(match_one(version, part) for part in constraint.split(",")) if constraint else True


def parse_spec(spec):
    m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$", spec.strip())
    name, rest = m.group(1).lower(), m.group(2).strip()
    if rest.startswith("=") and not rest.startswith("=="):
        rest = rest[1:]
    return name, rest.split("=")[0] if rest and not re.match(r"^[<>!=]", rest) else rest


# --- the solver -----------------------------------------------------------------------------
class Unsat(Exception):
    pass


def solve(index, specs):
    reqs = [(parse_spec(s), f"{s}") for s in specs]
    for (name, _), src in reqs:
        if name not in index:
            raise KeyError(name)
    deepest = [None]
    clashes = []

    def bt(pending, cons, chosen):
        if not pending:
            return chosen
        name = pending[0]
        if name in chosen:
            return bt(pending[1:], cons, chosen)
        for rec in index.get(name, []):
            if not all(match(rec["version"], c) for c, _ in cons.get(name, [])):
                continue
            new = {k: list(v) for k, v in cons.items()}
            deps = []
            for d in rec.get("depends", []):
                dn, dc = (d.split(" ", 1) + [""])[:2]
                new.setdefault(dn, []).append((dc, f"{name}={rec['version']} -> {dn}[version='{dc}']" if dc else f"{name} -> {dn}"))
                deps.append(dn)
            clash = [n for n in deps if n in chosen and not all(match(chosen[n]["version"], c) for c, _ in new.get(n, []))]
            if clash:
                if clashes is not None and not clashes:
                    clashes.append((clash[0], [src for _, src in new[clash[0]]]))
                continue
            got = bt(pending[1:] + [d for d in deps if d not in chosen], new, dict(chosen, **{name: rec}))
            if got is not None:
                return got
        if deepest[0] is None or len(chosen) >= deepest[0][2]:
            deepest[0] = (name, cons.get(name, []), len(chosen))
        return None

    cons = {}
    for (name, c), src in reqs:
        cons.setdefault(name, []).append((c, src))
    got = bt([n for (n, _), _ in reqs], cons, {})
    if got is None:
        if clashes:
            name, sources = clashes[0]
        else:
            name, why, _ = deepest[0]
            sources = [src for _, src in why]
        lines = "\n".join(f"  {src}" for src in sources)
        raise Unsat(f"The following specifications were found to be incompatible with each other:\n\nPackage {name} conflicts for:\n{lines}")
    return got
