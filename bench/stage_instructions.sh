#!/usr/bin/env bash
# Instructions per frame of each analysis stage, counted by callgrind: the
# report (--json, -j 1) of the first FRAMES frames of each capture, with
# every stage, with none (--skip all of them) and without each in turn. A
# stage's count is every stage's less without it. Counts do not drift
# with the host as times do, so a change that makes a stage do more work
# shows here even on a noisy virtual machine.
#
#   bench/stage_instructions.sh [CAPTURE...]   # default: compare.sh's shapes
#   FRAMES=50000 bench/stage_instructions.sh   # frames per capture (100 000)
#
# Needs valgrind and editcap (wireshark-common).
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${FRAMES:-100000}
for tool in valgrind editcap; do
    command -v $tool > /dev/null || { echo "needs $tool" >&2; exit 1; }
done
cargo build --release --quiet --bin roce-dissect
bin=target/release/roce-dissect
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    for s in bench small qps4096 qps65536 nvme pfc; do
        [ -f "bench/out/$s-500000.pcap" ] && files+=("bench/out/$s-500000.pcap")
    done
fi
[ ${#files[@]} -gt 0 ] || { echo "no captures: run bench/compare.sh shapes first, or name some" >&2; exit 1; }
stages=(duplicates throughput timing pauses cc nvme)
all=$(IFS=,; echo "${stages[*]}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count FILE SKIP: instructions of the whole run.
count() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
        "$bin" "$1" --json -j 1 --skip "$2" 2>&1 > /dev/null | awk '/refs:/ {gsub(",", "", $4); print $4}'
}

printf '%-28s %8s %8s %8s' "capture (first frames)" "total" "base"
for s in "${stages[@]}"; do printf ' %10s' "$s"; done
echo
for f in "${files[@]}"; do
    part=$tmp/part.pcap
    editcap -r "$f" "$part" "1-$frames" 2> /dev/null
    n=$("$bin" "$part" --json --max-events 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["capture"]["frames"])')
    full=$(count "$part" "")
    none=$(count "$part" "$all")
    printf '%-28s %8.0f %8.0f' "$(basename "$f" .pcap) ($n)" "$(( full / n ))" "$(( none / n ))"
    for s in "${stages[@]}"; do
        without=$(count "$part" "$s")
        printf ' %10.0f' "$(( (full - without) / n ))"
    done
    echo
done
echo "(instructions per frame: total = the whole run with every stage; base = every stage skipped;"
echo " a stage = total less the run without it)"
