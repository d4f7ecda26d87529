#!/usr/bin/env bash
# Measures the report's sizes and costs quoted in docs/report.md: report sizes and times
# for runs of growing length (the timeline's bound), a reproduction's report, and the
# browser test. Needs the release CLI (make build) and .venv (make python); writes out/measure/.
set -euo pipefail
cd "$(dirname "$0")/.."
H=target/release/hetsched
D=out/measure
mkdir -p "$D"
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); printf '%.2f' "$(echo "$e - $s" | bc)"; }
echo "run (hikey960)                          | events | buckets | bucket ms | json B | html B | run+report s"
for spec in "demo 2s" "demo 20s" "gen:periodic:duty=30,tasks=4,duration=200s 200s"; do
  set -- $spec
  s=$(t $H run hikey960 "$1" --duration "$2" --seed 1 -q --timeline --json "$D/r.json" --report "$D/r.html")
  python3 - "$D/r.json" "$D/r.html" "$1 $2" "$s" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
t = r["timeline"]
print(f"{sys.argv[3]:40} | {r['engine']['events']} | {t['buckets']} | {t['bucket_s']*1e3:g} | "
      f"{os.path.getsize(sys.argv[1])} | {os.path.getsize(sys.argv[2])} | {sys.argv[4]}")
PY
done
s=$(t $H reproduce overutilized --quick --jobs 2 --report "$D/ou.html")
echo "reproduce overutilized --quick --jobs 2 --report: $s s, $(stat -c %s "$D/ou.html") B"
s=$(t $H report "$D/r.json" -o "$D/r2.html")
echo "hetsched report of the 200 s result: $s s"
if [ -x .venv/bin/pytest ]; then
  s=$(t .venv/bin/pytest -q -p no:cacheprovider tests/python/test_report.py tests/python/test_report_browser.py)
  echo "pytest test_report.py test_report_browser.py: $s s"
fi
