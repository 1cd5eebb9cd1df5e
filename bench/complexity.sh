#!/usr/bin/env bash
# Hostile captures at n and 4n: time, peak RSS, output size, and the time
# ratio (about 4 for linear work; more than ~6 is a regression: a quadratic
# path, or memory that grows with what a file says).
#
#   bench/complexity.sh            every row
#   ROWS="collide pairs" bench/complexity.sh
#   SCALE=4 bench/complexity.sh    n multiplied by 4 (n and 4n become 4n and 16n)
#
# The captures come from examples/adversarial.rs (and `gen`), so anyone can
# rerun them; they go to bench/out/hostile/ (set OUT to move them).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out/hostile}
SCALE=${SCALE:-1}
mkdir -p "$OUT"
cargo build --release --quiet --bin roce-dissect --example adversarial
BIN=target/release/roce-dissect
ADV=target/release/examples/adversarial
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "needs GNU time (/usr/bin/time): apt-get install time"; exit 1; }

# name | generator (N is replaced) | n | roce-dissect arguments (FILE is replaced)
ROWS_ALL=(
  "collide|adv collide N|50000|FILE --json"
  "ordinary|adv ordinary N|50000|FILE --json"
  "pfc-macs|adv pfc-macs N|25000|FILE"
  "pairs|adv pairs N|10000|FILE --json"
  "gen-qps|gen --scenario loss --qps N --messages 1|10000|FILE"
  "gen-qps-json|gen --scenario loss --qps N --messages 1|10000|FILE --json"
  "distinct-qps|adv distinct-qps N|1250000|FILE --json"
  "ud-sources|adv ud-sources N|1000000|FILE"
  "pause-flap|adv pause-flap N|500000|FILE --json"
  "pausing-macs|adv pausing-macs N|50000|FILE"
  "cm-flood|adv cm-flood N|250000|FILE"
  "tiny-j1|adv tiny N|3125000|FILE -j 1"
  "tiny-j2|adv tiny N|3125000|FILE -j 2"
  "tiny-j8|adv tiny N|3125000|FILE -j 8"
  "tiny-j64|adv tiny N|3125000|FILE -j 64"
  "iface-j1|adv iface-options N|50|FILE -j 1"
  "iface-j8|adv iface-options N|50|FILE -j 8"
)

want=" ${ROWS:-} "
printf '%-14s %10s %9s %9s %10s   %10s %9s %9s %10s   %6s\n' \
  row n "s" "RSS MiB" "out MB" 4n "s" "RSS MiB" "out MB" ratio
for row in "${ROWS_ALL[@]}"; do
  IFS='|' read -r name generator n args <<<"$row"
  if [ -n "${ROWS:-}" ] && [[ "$want" != *" $name "* ]]; then continue; fi
  n=$((n * SCALE))
  line=$(printf '%-14s' "$name")
  secs=()
  for size in "$n" "$((4 * n))"; do
    ext=pcap
    [[ "$generator" == *iface-options* ]] && ext=pcapng
    file="$OUT/${generator// /_}-$size.$ext"
    file=${file//--/}
    if [ ! -s "$file" ]; then
      g=${generator//N/$size}
      case "$g" in
        adv\ *) $ADV ${g#adv } "$file" ;;
        gen\ *) $BIN $g --format ns-pcap -o "$file" 2>/dev/null ;;
      esac
    fi
    a=${args//FILE/$file}
    # shellcheck disable=SC2086
    $TIME -f '%e %M' -o "$OUT/time" $BIN $a >"$OUT/stdout" 2>"$OUT/stderr" || true
    read -r s kib <"$OUT/time" || { s=NA; kib=0; }
    mb=$(awk -v b="$(stat -c %s "$OUT/stdout")" 'BEGIN { printf "%.1f", b / 1e6 }')
    line+=$(printf ' %10s %9s %9d %10s  ' "$size" "$s" $((kib / 1024)) "$mb")
    secs+=("$s")
  done
  ratio=$(awk -v a="${secs[0]}" -v b="${secs[1]}" 'BEGIN { if (a > 0.05) printf "%.1f", b / a; else printf "-" }')
  echo "$line $(printf '%6s' "$ratio")"
  grep -m1 "warning" "$OUT/stderr" | cut -c1-150 | sed 's/^/                 /' || true
done
