#!/usr/bin/env bash
# Times roce-dissect against `cat` and tshark on generated captures.
#
#   bench/compare.sh                 # 500 000 and 5 000 000 frames
#   bench/compare.sh 500000          # one size
#   NO_TSHARK=1 bench/compare.sh     # skip tshark (it needs minutes on 5 M frames)
#
# Captures: `roce-dissect gen --scenario mixed` with 256 QPs (RoCE v1 and v2,
# IPv4 and IPv6, CM, drops, reordering, CE/CNP, PFC), 4 KiB messages over a
# 1 KiB PMTU: mostly ~1.1 KB data frames plus ACKs and READ responses.
# Each command runs with a warm page cache; /usr/bin/time -v gives peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(500000 5000000)
out=bench/out
mkdir -p "$out"
cargo build --release --quiet
bin=target/release/roce-dissect
have_tshark=0
if [ -z "${NO_TSHARK:-}" ] && command -v tshark >/dev/null 2>&1; then have_tshark=1; fi
timer=/usr/bin/time
[ -x "$timer" ] || { echo "needs GNU time (apt-get install time)"; exit 1; }

# run NAME CMD... : prints seconds and peak RSS (MiB) of one run.
run() {
    local name=$1; shift
    "$timer" -f "%e %M" -o "$out/time.txt" "$@" > /dev/null 2> "$out/stderr.txt" || {
        echo "$name failed:"; cat "$out/stderr.txt"; exit 1; }
    read -r secs kib < "$out/time.txt"
    echo "$secs $((kib / 1024))"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "roce-dissect $($bin --version | cut -d' ' -f2), $(tshark --version 2>/dev/null | head -1 | cut -d' ' -f1-3 || echo 'no tshark')"
for n in "${sizes[@]}"; do
    f=$out/bench-$n.pcap
    per_qp=$(( n / 256 / 5 + 1 ))
    if [ ! -f "$f" ]; then
        read -r g_s _ <<< "$(run gen $bin gen --scenario mixed --seed 1 --qps 256 --messages "$per_qp" \
            --size 4096 --pmtu 1024 -o "$f")"
        gen_frames=$($bin "$f" --json --max-events 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["capture"]["frames"])')
        python3 -c "print(f'generated $gen_frames frames in $g_s s ({$gen_frames/max($g_s,0.001)/1e6:.2f} M frames/s)')"
    fi
    frames=$($bin "$f" --json --max-events 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["capture"]["frames"])')
    size_mb=$(( $(stat -c %s "$f") / 1024 / 1024 ))
    cat "$f" > /dev/null  # warm the page cache
    echo
    echo "## $f: $frames frames, $size_mb MiB"
    printf '%-58s %9s %13s %9s %9s\n' "command" "seconds" "frames/s" "vs cat" "RSS MiB"
    read -r cat_s cat_m <<< "$(run cat cat "$f")"
    row() {
        local label=$1 secs=$2 mib=$3
        python3 - "$label" "$secs" "$mib" "$frames" "$cat_s" <<'PY'
import sys
label, secs, mib, frames, cat = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
s = max(secs, 0.005)
print(f"{label:<58} {secs:9.2f} {frames/s/1e6:11.2f} M {s/max(cat,0.005):8.1f}x {mib:>9}")
PY
    }
    row "cat FILE > /dev/null" "$cat_s" "$cat_m"
    read -r a_s a_m <<< "$(run report $bin "$f" --json)"
    row "roce-dissect FILE --json" "$a_s" "$a_m"
    read -r t_s t_m <<< "$(run text $bin "$f")"
    row "roce-dissect FILE (text report)" "$t_s" "$t_m"
    read -r p_s p_m <<< "$(run packets $bin packets "$f" --json)"
    row "roce-dissect packets FILE --json" "$p_s" "$p_m"
    if [ $have_tshark = 1 ]; then
        read -r ts_s ts_m <<< "$(run tshark tshark -n -r "$f" -T fields -e infiniband.bth.opcode \
            -e infiniband.bth.destqp -e infiniband.bth.psn)"
        row "tshark -T fields -e bth.opcode -e bth.destqp -e bth.psn" "$ts_s" "$ts_m"
        python3 - "$ts_s" "$a_s" "$p_s" <<'PY'
import sys
t, a, p = (max(float(x), 0.005) for x in sys.argv[1:])
print(f"analysis is {t/a:.0f}x faster than tshark field extraction; packets --json is {t/p:.0f}x faster")
PY
    fi
done
