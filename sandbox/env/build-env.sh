#!/bin/sh
# Builds AcaClaw's primary env in the sandbox image (sandbox/Dockerfile runs it in its conda stage):
# stage 1's core stack (acaclaw.txt) with the chosen disciplines' essential packages merged into the
# same env (disciplines.txt; R and each discipline's R packages only with WITH_R=true), solved once
# from the configured channels only. Then it writes what the image holds, for the gateway to read:
#   $OUT/<env>.explicit.txt   the env's explicit lock (`conda list --explicit --md5`): a later
#                             `conda create -n <env> --file` rebuilds exactly these packages
#   $OUT/env-manifest.json    AcaClaw's manifest of that env (type primary, description with the
#                             disciplines, Python / R versions, createdAt), plus its disciplines
# Inputs (environment): CONDA (/opt/conda/bin/conda), ENV_NAME (acaclaw), CHANNELS ("conda-forge",
# space-separated), DISCIPLINES ("biology,medicine": ids or AcaClaw bundle names), WITH_R (false),
# OUT (/opt/conda/edgeclaw). test/scripts/sandbox-image.node-test.ts runs it against the conda stand-in.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CONDA=${CONDA:-/opt/conda/bin/conda}
ENV_NAME=${ENV_NAME:-acaclaw}
CHANNELS=${CHANNELS:-conda-forge}
DISCIPLINES=${DISCIPLINES:-}
WITH_R=${WITH_R:-false}
OUT=${OUT:-/opt/conda/edgeclaw}

case "$WITH_R" in true | false) ;; *) echo "WITH_R must be true or false, not '$WITH_R'" >&2; exit 2 ;; esac
channel_args="--override-channels"
for c in $CHANNELS; do channel_args="$channel_args -c $c"; done

extra=""
chosen=""
labels=""
for d in $(printf '%s' "$DISCIPLINES" | tr ',' ' '); do
  line=$(grep -v '^#' "$here/disciplines.txt" | awk -v d="$d" '$1 == d || $2 == d' | head -n 1)
  if [ -z "$line" ]; then
    echo "unknown discipline '$d': one of $(grep -v '^#' "$here/disciplines.txt" | awk '{print $1}' | tr '\n' ' ')" >&2
    exit 2
  fi
  # shellcheck disable=SC2086 # the line's fields, split on purpose
  set -- $line
  extra="$extra $(printf '%s' "$3" | tr ',' ' ')"
  if [ "$WITH_R" = true ] && [ "$4" != "-" ]; then extra="$extra $(printf '%s' "$4" | tr ',' ' ')"; fi
  chosen="$chosen $1"
done
if [ "$WITH_R" = true ]; then extra="$extra r-base r-irkernel r-essentials"; fi
# One spec per package name, in the order first given.
extra=$(printf '%s\n' $extra | awk 'NF && !seen[$0]++' | tr '\n' ' ')

echo "creating $ENV_NAME: $(grep -v '^#' "$here/acaclaw.txt" | tr '\n' ' ')$extra"
# shellcheck disable=SC2086
"$CONDA" create -n "$ENV_NAME" --file "$here/acaclaw.txt" $extra -y $channel_args

mkdir -p "$OUT"
"$CONDA" list -n "$ENV_NAME" --explicit --md5 > "$OUT/$ENV_NAME.explicit.txt"
grep -q '^@EXPLICIT' "$OUT/$ENV_NAME.explicit.txt" || { echo "no explicit lock for $ENV_NAME" >&2; exit 1; }
"$CONDA" list -n "$ENV_NAME" --json > "$OUT/$ENV_NAME.packages.json"
ENV_NAME="$ENV_NAME" CHOSEN="$chosen" WITH_R="$WITH_R" OUT="$OUT" DISCIPLINES_FILE="$here/disciplines.txt" python3 - <<'PY'
import json, os, time
out, name = os.environ["OUT"], os.environ["ENV_NAME"]
packages = {p["name"]: p["version"] for p in json.load(open(os.path.join(out, name + ".packages.json")))}
labels = {"biology": "Biology", "chemistry": "Chemistry", "medicine": "Medicine", "general": "General science"}
chosen = os.environ["CHOSEN"].split()
entry = {
    "type": "primary",
    "description": " + ".join(["Base scientific environment"] + [labels.get(d, d) for d in chosen]),
    "pythonVersion": packages.get("python"),
    "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "disciplines": chosen,
    "lockFile": name + ".explicit.txt",
}
if "r-base" in packages:
    entry["rVersion"] = packages["r-base"]
with open(os.path.join(out, "env-manifest.json"), "w") as f:
    json.dump({"environments": {name: entry}, "defaultEnv": name}, f, indent=2)
    f.write("\n")
PY
rm "$OUT/$ENV_NAME.packages.json"
echo "$ENV_NAME: $(grep -c '://' "$OUT/$ENV_NAME.explicit.txt") packages locked in $OUT/$ENV_NAME.explicit.txt"
