#!/usr/bin/env bash
# Time to the TUI's first screen and its peak memory on a generated capture.
#   bench/tui_first_screen.sh [FRAMES]    (default 1 000 000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
cargo build --release --quiet
bin=$PWD/target/release/roce-dissect
mkdir -p bench/out
f=bench/out/tui-$n.pcap
[ -f "$f" ] || $bin gen --scenario mixed --seed 2 --qps 256 --messages $(( n / 256 / 5 + 1 )) \
    --size 4096 --pmtu 1024 -o "$f" 2>/dev/null
cat "$f" > /dev/null
s=tui-bench-$$
start=$(date +%s.%N)
tmux new-session -d -s "$s" -x 160 -y 45 "$bin tui $f"
until tmux capture-pane -t "$s" -p | grep -q "Flows ("; do sleep 0.02; done
end=$(date +%s.%N)
pid=$(pgrep -f "^$bin tui $f" | head -1)
hwm=$(grep VmHWM /proc/"$pid"/status | awk '{print $2}')
tmux send-keys -t "$s" Enter; sleep 0.5
tmux send-keys -t "$s" q; sleep 0.2; tmux send-keys -t "$s" q; sleep 0.3
tmux kill-session -t "$s" 2>/dev/null || true
frames=$($bin "$f" --json --max-events 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["capture"]["frames"])')
python3 -c "print(f'{$frames} frames, $(( $(stat -c %s "$f") / 1048576 )) MiB: first screen after {$end-$start:.2f} s, peak RSS {$hwm/1024:.0f} MiB')"
