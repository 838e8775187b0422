"""The conda stand-in's spec files (imported by ./conda): what conda documents for
`conda list --explicit [--md5]` (a `@EXPLICIT` file: one package URL a line, `#<md5>` after it) and
for `conda create|install --file F` (F is either such an explicit file, whose packages are linked as
listed with no solve, or a plain spec file: one MatchSpec a line, `#` comments). The stand-in's
packages have no tarball, so the md5 is that of the channel's repodata record (stable per package).
"""
import hashlib, json, os


def record_md5(rec):
    body = {k: rec[k] for k in sorted(rec) if k not in ("fn", "channel", "base_url")}
    return hashlib.md5(json.dumps(body, sort_keys=True).encode()).hexdigest()


def explicit_lines(records, with_md5):
    """`conda list --explicit`: conda's header, then one URL per package in the env."""
    lines = ["# This file may be used to create an environment using:",
             "# $ conda create --name <env> --file <this file>",
             "# platform: linux-64", "@EXPLICIT"]
    for r in sorted(records, key=lambda r: r["name"]):
        url = f"{r.get('channel', 'local').rstrip('/')}/{r.get('subdir', 'noarch')}/{r['fn']}"
        lines.append(url + (f"#{record_md5(r)}" if with_md5 else ""))
    return lines


def read_spec_file(path):
    """(kind, entries): ("explicit", [url…]) for an @EXPLICIT file, else ("specs", [spec…])."""
    with open(path) as f:
        lines = [l.strip() for l in f]
    entries = [l for l in lines if l and not l.startswith("#")]
    if "@EXPLICIT" in entries:
        return "explicit", [l for l in entries[entries.index("@EXPLICIT") + 1:]]
    return "specs", entries


def explicit_records(urls, fail, as_json):
    """The channel records the URLs name, checked as conda does (reachable, md5 when given)."""
    records = {}
    cache = {}
    for entry in urls:
        url, _, md5 = entry.partition("#")
        if not url.startswith("file://"):
            fail("CondaHTTPError", f"HTTP 000 CONNECTION FAILED for url <{url}>", as_json)
        channel_dir, subdir, fn = url[len("file://"):].rsplit("/", 2)
        if channel_dir not in cache:
            try:
                with open(os.path.join(channel_dir, subdir, "repodata.json")) as f:
                    cache[channel_dir] = json.load(f).get("packages", {})
            except OSError:
                fail("CondaFileIOError", f"'{url}'. [Errno 2] No such file or directory", as_json)
        rec = cache[channel_dir].get(fn)
        if rec is None:
            fail("CondaFileIOError", f"'{url}'. [Errno 2] No such file or directory", as_json)
        channel = "file://" + channel_dir
        rec = dict(rec, fn=fn, channel=channel, base_url=channel)
        if md5 and md5 != record_md5(rec):
            fail("ChecksumMismatchError", f"Conda detected a mismatch between the expected content and downloaded content for url '{url}'.\n  expected md5: {md5}\n  actual md5: {record_md5(rec)}", as_json)
        records[rec["name"]] = rec
    return records
