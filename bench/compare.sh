#!/usr/bin/env bash
# Times roce-dissect against `cat` and tshark on generated captures.
#
#   bench/compare.sh                 # 500 000 and 5 000 000 frames
#   bench/compare.sh 500000          # one size
#   RUNS=5 bench/compare.sh          # best of 5 runs per command (default 3)
#   TSHARK_RUNS=1 bench/compare.sh   # tshark runs (default 1 on 5 M frames, else RUNS)
#   NO_TSHARK=1 bench/compare.sh     # skip tshark (it needs minutes on 5 M frames)
#
# Captures: `roce-dissect gen --scenario mixed` with 256 QPs (RoCE v1 and v2,
# IPv4 and IPv6, CM, drops, reordering, CE/CNP, PFC), 4 KiB messages over a
# 1 KiB PMTU: mostly ~1.1 KB data frames plus ACKs and READ responses.
# Each capture is first dropped from the page cache and read back by
# roce-dissect (which counts its frames), so it is cached the way a capture
# read from disk is, not the way gen's writes left it: roce-dissect asks
# for huge pages, so where transparent huge pages are enabled (the
# `madvise` default) the file is cached in 2 MiB folios, and mapping a chunk
# takes one page-table entry instead of 512. One more row times a copy
# written by `cat` and still cached as written (4 KiB-128 KiB folios).
# The file is read once by `cat` before every run (page cache warm: some
# virtual machines reclaim idle page cache between runs); each command's
# time is the best of its runs (shared machines are noisy), its peak RSS
# the largest (/usr/bin/time -v). Wall time is read from bash's
# EPOCHREALTIME (microseconds; GNU time's %e has 10 ms steps), around the
# whole `time` process, so it includes a fork and exec.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(500000 5000000)
runs=${RUNS:-3}
out=bench/out
mkdir -p "$out"
cargo build --release --quiet
bin=target/release/roce-dissect
have_tshark=0
if [ -z "${NO_TSHARK:-}" ] && command -v tshark >/dev/null 2>&1; then have_tshark=1; fi
timer=/usr/bin/time
[ -x "$timer" ] || { echo "needs GNU time (apt-get install time)"; exit 1; }

# best N FILE CMD... : the best seconds and largest peak RSS (MiB) of N runs.
best() {
    local n=$1 file=$2; shift 2
    local best_s="" max_kib=0
    for _ in $(seq "$n"); do
        cat "$file" > /dev/null
        local t0=$EPOCHREALTIME
        "$timer" -f "%M" -o "$out/time.txt" "$@" > /dev/null 2> "$out/stderr.txt" || {
            echo "$* failed:" >&2; cat "$out/stderr.txt" >&2; exit 1; }
        local t1=$EPOCHREALTIME
        read -r kib < "$out/time.txt"
        local secs
        secs=$(python3 -c "print(f'{$t1 - $t0:.4f}')")
        if [ -z "$best_s" ] || python3 -c "import sys; sys.exit(not $secs < $best_s)"; then best_s=$secs; fi
        [ "$kib" -gt "$max_kib" ] && max_kib=$kib
    done
    echo "$best_s $((max_kib / 1024))"
}

# evict FILE: drops FILE from the page cache (no root needed).
evict() {
    python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)' "$1"
}

frames_of() {
    $bin "$1" --json --max-events 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["capture"]["frames"])'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "roce-dissect $($bin --version | cut -d' ' -f2), $(tshark --version 2>/dev/null | head -1 | cut -d' ' -f1-3 || echo 'no tshark')"
echo "times: best of $runs runs, page cache warm"
for n in "${sizes[@]}"; do
    f=$out/bench-$n.pcap
    per_qp=$(( n / 256 / 5 + 1 ))
    if [ ! -f "$f" ]; then
        read -r g_s _ <<< "$(best 1 /dev/null $bin gen --scenario mixed --seed 1 --qps 256 --messages "$per_qp" \
            --size 4096 --pmtu 1024 -o "$f")"
        gen_frames=$(frames_of "$f")
        python3 -c "print(f'generated $gen_frames frames in $g_s s ({$gen_frames/max($g_s,0.001)/1e6:.2f} M frames/s)')"
    fi
    evict "$f"
    frames=$(frames_of "$f")
    size_mb=$(( $(stat -c %s "$f") / 1024 / 1024 ))
    echo
    echo "## $f: $frames frames, $size_mb MiB"
    printf '%-58s %9s %13s %9s %9s\n' "command" "seconds" "frames/s" "vs cat" "RSS MiB"
    read -r cat_s cat_m <<< "$(best "$runs" "$f" cat "$f")"
    row() {
        local label=$1 secs=$2 mib=$3
        python3 - "$label" "$secs" "$mib" "$frames" "$cat_s" <<'PY'
import sys
label, secs, mib, frames, cat = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
s = max(secs, 0.005)
print(f"{label:<58} {secs:9.3f} {frames/s/1e6:11.2f} M {s/max(cat,0.005):8.1f}x {mib:>9}")
PY
    }
    row "cat FILE > /dev/null" "$cat_s" "$cat_m"
    read -r a_s a_m <<< "$(best "$runs" "$f" $bin "$f" --json)"
    row "roce-dissect FILE --json" "$a_s" "$a_m"
    cat "$f" > "$f.written"
    read -r w_s w_m <<< "$(best "$runs" "$f.written" $bin "$f.written" --json)"
    rm -f "$f.written"
    row "roce-dissect FILE --json, a copy cached as cat wrote it" "$w_s" "$w_m"
    read -r t_s t_m <<< "$(best "$runs" "$f" $bin "$f")"
    row "roce-dissect FILE (text report)" "$t_s" "$t_m"
    read -r s_s s_m <<< "$(best "$runs" "$f" $bin "$f" --json --threads 1)"
    row "roce-dissect FILE --json --threads 1" "$s_s" "$s_m"
    read -r p_s p_m <<< "$(best "$runs" "$f" $bin packets "$f" --json)"
    row "roce-dissect packets FILE --json" "$p_s" "$p_m"
    if [ $have_tshark = 1 ]; then
        t_runs=${TSHARK_RUNS:-$([ "$n" -ge 2000000 ] && echo 1 || echo "$runs")}
        read -r ts_s ts_m <<< "$(best "$t_runs" "$f" tshark -n -r "$f" -T fields -e infiniband.bth.opcode \
            -e infiniband.bth.destqp -e infiniband.bth.psn)"
        row "tshark -T fields -e bth.opcode -e bth.destqp -e bth.psn" "$ts_s" "$ts_m"
        python3 - "$ts_s" "$a_s" "$p_s" "$cat_s" "$a_m" <<'PY'
import sys
t, a, p, c = (max(float(x), 0.005) for x in sys.argv[1:5])
rss = int(sys.argv[5])
print(f"analysis is {t/a:.0f}x faster than tshark field extraction (target 200x); "
      f"{a/c:.1f}x the time of cat (target 3x); peak RSS {rss} MiB (target 64); "
      f"packets --json is {t/p:.0f}x faster than tshark")
PY
    fi
done
