#!/usr/bin/env bash
# Times roce-dissect against `cat` and tshark on generated captures.
#
#   bench/compare.sh                 # 500 000 and 5 000 000 frames
#   bench/compare.sh 500000          # one size
#   RUNS=5 bench/compare.sh          # 5 runs per command (default 3)
#   TSHARK_RUNS=1 bench/compare.sh   # tshark runs (default 1 on 5 M frames, else RUNS)
#   NO_TSHARK=1 bench/compare.sh     # skip tshark (it needs minutes on 5 M frames)
#   NO_OTHER=1 bench/compare.sh      # skip the other-inputs table (below)
#   OTHER='xz|InfiniBand' bench/compare.sh  # only its rows whose label matches (grep -E)
#   NO_MAIN=1 bench/compare.sh       # skip the first table (the 900-byte report, cat, tshark)
#   bench/compare.sh shapes          # only the shapes table (below)
#   NO_SHAPES=1 bench/compare.sh     # skip it
#   SHAPES='QPs' bench/compare.sh shapes  # only the shapes whose label matches (grep -E)
#
# Captures: `roce-dissect gen --scenario mixed` with 256 QPs (RoCE v1 and v2,
# IPv4 and IPv6, CM, drops, reordering, CE/CNP, PFC), 4 KiB messages over a
# 1 KiB PMTU: mostly ~1.1 KB data frames plus ACKs and READ responses.
# Each capture is cached the way a capture read from disk is (see `warm`):
# on the project's machine (Linux 6.18, ext4) that is mostly in 2 MiB
# folios, which a map covers with one page-table entry each instead of 512.
# One more row times a copy written by `cat` and cached as its 128 KiB
# writes left it, in smaller folios, and one the same frames written as
# pcapng (`gen --format pcapng`, same seed). The memory-floor row is
# `examples/read_floor.rs`: the file mapped and read once on every core,
# chunk by chunk as the report's reader does, doing nothing with the bytes;
# the analysis reads them all too (the ICRC covers every byte), so it can
# come no closer than that.
# The commands run in rounds, one run of each per round, so that all of
# them see the same machine: on a shared virtual machine the speed drifts
# by up to 2x over minutes, and timing one command's runs back to back
# would compare a fast minute with a slow one. Before every run the file
# is dropped from the page cache and read back in full by `cat` (page
# cache warm, and in the same state for every command: see `warm`); each
# command's times are the best and the median of its runs (frames/s and
# the ratios from the best), its peak RSS the largest.
# A second table times the other inputs users bring, each against what a
# user would otherwise run on the same frames: the capture gzip-, zstd- and
# xz-compressed (tshark reads gzip itself; zstd and xz through a pipe, as
# tshark 4.0 cannot), the capture on standard input through a pipe
# (`cat FILE | roce-dissect -`, as from `tcpdump -w -`; tshark reads the
# same pipe), split in two halves read with --merge (against
# mergecap | tshark), split in four read as four files (one report each,
# against tshark on each in turn), and the same traffic on native
# InfiniBand in ERF records as ibdump writes them (`gen --link erf`);
# then `packets` (the summary lines and -V's header trees, against
# tshark's own; the lines also from a pipe, as a live `tcpdump -U -w -`
# gives them, against `tshark -r -` on the same pipe), a display filter selecting few frames and -T fields
# with four fields, against tshark -Y and tshark -T fields.
# A third table times the report on other shapes of traffic users have,
# about 500 000 frames each (see `shapes`): small frames, thousands of
# QPs (idle, and congested: CE marks and CNPs on nearly every sender),
# NVMe-oF, PFC-heavy, and the 5 M-frame file; each beside cat, the memory
# floor and tshark, best and median, and with the host pairs analysed on
# 2 threads side by side (--analysis-threads 2, best).
# The header says what each core gets when all of them work at once
# (examples/core_share.rs: an arithmetic job and a memory-bound one, alone
# and one per core), as on a shared VM a second core may give less.
# Each run is timed by examples/run_timed.rs: a nanosecond clock
# (CLOCK_MONOTONIC) read just before it spawns the command and just after
# it waits for it, so the time includes the command's fork and exec as a
# user's shell would, and the command's peak RSS from getrusage after that
# wait (its largest process, as /usr/bin/time reports it), both from the
# same run.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
only_shapes=0
if [ "${sizes[0]:-}" = shapes ]; then only_shapes=1; sizes=(); fi
[ ${#sizes[@]} -gt 0 ] || [ $only_shapes = 1 ] || sizes=(500000 5000000)
runs=${RUNS:-3}
out=bench/out
mkdir -p "$out"
cargo build --release --quiet --bin roce-dissect --example read_floor --example run_timed \
    --example core_share
bin=target/release/roce-dissect
floor=target/release/examples/read_floor
timer=target/release/examples/run_timed
have_tshark=0
if [ -z "${NO_TSHARK:-}" ] && command -v tshark >/dev/null 2>&1; then have_tshark=1; fi

# quiet CMD... : runs CMD, output discarded; on failure shows its errors
# and stops.
quiet() {
    "$@" > /dev/null 2> "$out/stderr.txt" || {
        echo "$* failed:" >&2; cat "$out/stderr.txt" >&2; exit 1; }
}

# measure FILE RSS CMD... : seconds of one run of CMD, FILE warm, and its
# peak RSS (KiB) if RSS is 1 (else 0), both from that run (run_timed).
measure() {
    local file=$1 rss=$2; shift 2
    warm "$file"
    quiet "$timer" "$out/time.txt" "$@"
    local secs kib
    read -r secs kib < "$out/time.txt"
    [ "$rss" = 1 ] || kib=0
    echo "$secs $kib"
}

# evict FILE: drops FILE from the page cache (no root needed). Dirty pages
# cannot be dropped, so the file is written back first: without that, a
# capture gen has just written stayed cached as written.
evict() {
    python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)' "$1"
}

# warm FILE: puts FILE in the page cache the way a capture read from disk is
# cached: dropped, then read in full. Reading it alone is not enough: this
# kind of VM reclaims page cache left idle for seconds (DAMON), and what
# came back in between runs was cached in small folios more often than not
# (mapping it took 3x as long). A copy that cat wrote keeps the state its
# writes left: it is only read.
warm() {
    if [ -f "$1" ] && [[ $1 != *.written ]]; then evict "$1"; fi
    cat "$1" > /dev/null
}

frames_of() {
    $bin "$1" --json --max-events 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["capture"]["frames"])'
}

# other_inputs N FILE PER_QP: the second table (see the top).
other_inputs() {
    local n=$1 f=$2 per_qp=$3
    local fields=(-T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn)
    # OTHER=REGEX: only the rows whose label matches, and only their files.
    want() { [ -z "${OTHER:-}" ] || grep -qE -- "$OTHER" <<< "$1"; }
    if want gzip && [ ! -f "$f.gz" ]; then gzip -1 -c "$f" > "$f.gz"; fi
    if want zstd && [ ! -f "$f.zst" ]; then zstd -q -1 -c "$f" > "$f.zst"; fi
    if want xz && [ ! -f "$f.xz" ]; then xz -1 -T0 -c "$f" > "$f.xz"; fi
    local half=$(( n / 2 )) q=$(( (n + 3) / 4 ))
    local parts=()
    if want 'halves|quarters|fabric' && [ ! -f "$f.half2" ]; then
        editcap -r "$f" "$f.half1" "1-$half" && editcap -r "$f" "$f.half2" "$((half + 1))-$n"
        for i in 0 1 2 3; do
            editcap -F pcap -r "$f" "$f.q$i" "$((i * q + 1))-$(( (i + 1) * q ))"
        done
    fi
    for i in 0 1 2 3; do parts+=("$f.q$i"); done
    local erf=$out/bench-$n.erf.pcap
    want InfiniBand && [ ! -f "$erf" ] && quiet $bin gen --scenario mixed --seed 1 --qps 256 --messages "$per_qp" \
        --size 4096 --pmtu 1024 --link erf -o "$erf"
    # NVMe-oF queues with about as many frames (some 49 per command and
    # queue: 8 I/O queues, ~6 frames per I/O).
    local nv=$out/nvme-$n.pcap
    want NVMe && [ ! -f "$nv" ] && quiet $bin gen --scenario nvme --seed 1 --qps 8 --messages "$(( n / 49 + 1 ))" -o "$nv"
    # Three senders answering CE marks (about 2,500 frames a mark at PMTU
    # 1024): plan dcqcn --from replays one flow's CNPs; a user would pull
    # the flow's frames and the CNPs out with tshark and step a model.
    local dc=$out/dcqcn-$n.pcap
    want dcqcn && [ ! -f "$dc" ] && quiet $bin gen --scenario dcqcn --seed 1 --pmtu 1024 --messages "$(( n / 2500 + 1 ))" -o "$dc"
    # A mirror's TCP (bench/tcp_mirror.py): bulk transfers on 1 000
    # connections, a segment in 50 lost and sent again.
    local tm=$out/tcp-$n.pcap
    want TCP && [ ! -f "$tm" ] && python3 bench/tcp_mirror.py "$n" "$tm"
    # The same transfers as SSH sessions (scp's bulk copies): every data
    # segment an encrypted packet.
    local sm=$out/ssh-$n.pcap
    want SSH && [ ! -f "$sm" ] && python3 bench/tcp_mirror.py "$n" "$sm" 22
    # A mirror's HTTPS (bench/tls_mirror.py): TLS 1.3 downloads on 1 000
    # connections, records across segments, a segment in 50 lost and sent
    # again.
    local hm=$out/tls-$n.pcap
    want 'HTTPS|Hello' && [ ! -f "$hm" ] && python3 bench/tls_mirror.py "$n" "$hm"
    # A mirror's HTTP (bench/http_mirror.py): REST calls on 1 000
    # keep-alive connections, JSON responses across segments, one in ten
    # chunked, a quarter on a port only the heuristic finds.
    local hp=$out/http-$n.pcap
    want 'HTTP calls|answers' && [ ! -f "$hp" ] && python3 bench/http_mirror.py "$n" "$hp"
    # A mirror's name service (bench/dns_mirror.py): DNS lookups and their
    # answers, one in 20 failing, mDNS announcements, LLMNR questions.
    local dm=$out/dns-$n.pcap
    want 'DNS|dns' && [ ! -f "$dm" ] && python3 bench/dns_mirror.py "$n" "$dm"
    # A mirror's management broadcasts (bench/discovery_mirror.py): NetBIOS
    # name queries, DHCP exchanges, SSDP discovery and announcements.
    local dsc=$out/discovery-$n.pcap
    want 'NBNS|DHCP|SSDP|dhcp' && [ ! -f "$dsc" ] && python3 bench/discovery_mirror.py "$n" "$dsc"
    # What a user would run for the pause graph: every link's PFC frames
    # and the MACs of its frames, through tshark.
    local t_cmd_pfc="for p in ${parts[*]}; do tshark -n -r \$p -T fields -e frame.time_epoch -e eth.src -e eth.dst -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 > /dev/null; done"
    local t_cmd_quarters="for p in ${parts[*]}; do tshark -n -r \$p ${fields[*]} > /dev/null; done"
    # export: every column of the packets table tshark 4.0 also has, as the
    # CSV a user would load into DuckDB or Spark otherwise.
    local t_cmd_csv="true"
    if [ $have_tshark = 1 ]; then
        local csv_fields
        csv_fields=$(comm -12 \
            <($bin export --schema | awk -F'`' '/^#### /{on = ($2 == "packets")} on && /^\| `/{print $4}' | sort -u) \
            <(tshark -G fields 2>/dev/null | awk -F'\t' '$1 == "F" {print $3}' | sort -u) | sed 's/^/-e /' | tr '\n' ' ')
        t_cmd_csv="tshark -n -r $f -T fields -E header=y -E separator=, -E quote=d -E occurrence=f $csv_fields > $out/packets.csv"
    fi
    local rows=(
        "gzip|$f.gz|$bin $f.gz --json|tshark -n -r $f.gz ${fields[*]}"
        "zstd|$f.zst|$bin $f.zst --json|zstd -dc $f.zst | tshark -n -r - ${fields[*]}"
        "xz|$f.xz|$bin $f.xz --json|xz -dc $f.xz | tshark -n -r - ${fields[*]}"
        "standard input: cat FILE into a pipe, -|$f|$bin - --json < <(cat $f)|tshark -n -r - ${fields[*]} < <(cat $f)"
        "two halves, --merge|$f.half1|$bin --merge $f.half1 $f.half2 --json|mergecap -w - $f.half1 $f.half2 | tshark -n -r - ${fields[*]}"
        "four quarters, a report each|${parts[0]}|$bin ${parts[*]} --json|$t_cmd_quarters"
        "native InfiniBand in ERF (gen --link erf)|$erf|$bin $erf --json|tshark -n -r $erf ${fields[*]}"
        "packets -Y 'bth.opcode == 0x81' (CNPs: few frames)|$f|$bin packets $f -Y 'bth.opcode == 0x81'|tshark -n -r $f -Y 'infiniband.bth.opcode == 0x81'"
        "packets: tshark-style lines|$f|$bin packets $f|tshark -n -r $f"
        "packets - from a pipe (cat FILE, as tcpdump -U -w -)|$f|$bin packets - < <(cat $f)|tshark -n -r - < <(cat $f)"
        "packets -V: every frame's header tree|$f|$bin packets -V $f|tshark -n -r $f -V"
        "packets -T fields, 4 fields|$f|$bin packets $f -T fields -e frame.number ${fields[*]:2}|tshark -n -r $f -T fields -e frame.number ${fields[*]:2}"
        "packets -T fields -e _ws.col.Info (the Info column)|$f|$bin packets $f -T fields -e frame.number -e _ws.col.Info|tshark -n -r $f -T fields -e frame.number -e _ws.col.Info"
        "packets -Y 'eth.src matches ...' (a regular expression)|$f|$bin packets $f -Y 'eth.src matches \"\\\\x02\\\\x00\\\\x00\\\\x00\\\\x01\\\\x01\"'|tshark -n -r $f -Y 'eth.src matches \"\\\\x02\\\\x00\\\\x00\\\\x00\\\\x01\\\\x01\"'"
        "packets -T fields -e frame.time (times in words)|$f|$bin packets $f -T fields -e frame.number -e frame.time|tshark -n -r $f -T fields -e frame.number -e frame.time"
        "packets -Y a 10 ms window by frame.time, ip.proto by name|$f|$bin packets $f -Y 'frame.time >= \"2026-01-01 00:00:00.05 UTC\" && frame.time < \"2026-01-01 00:00:00.06 UTC\" && ip.proto == \"UDP\"'|tshark -n -r $f -Y 'frame.time >= \"2026-01-01 00:00:00.05 UTC\" && frame.time < \"2026-01-01 00:00:00.06 UTC\" && ip.proto == \"UDP\"'"
        "packets -Y '!tcp && !arp && !igmp' (a mirror's other traffic out)|$f|$bin packets $f -Y '!tcp && !arp && !igmp'|tshark -n -r $f -Y '!tcp && !arp && !igmp'"
        "packets: a mirror's TCP (tcp_mirror.py)|$tm|$bin packets $tm|tshark -n -r $tm"
        "packets -Y tcp.analysis.flags|$tm|$bin packets $tm -Y tcp.analysis.flags|tshark -n -r $tm -Y tcp.analysis.flags"
        "packets: a mirror's DNS, mDNS, LLMNR (dns_mirror.py)|$dm|$bin packets $dm|tshark -n -r $dm"
        "packets -Y 'dns.flags.rcode == 3' (failed lookups)|$dm|$bin packets $dm -Y 'dns.flags.rcode == 3'|tshark -n -r $dm -Y 'dns.flags.rcode == 3'"
        "packets: a mirror's SSH sessions (tcp_mirror.py N F 22)|$sm|$bin packets $sm|tshark -n -r $sm"
        "packets: a mirror's NBNS, DHCP, SSDP (discovery_mirror.py)|$dsc|$bin packets $dsc|tshark -n -r $dsc"
        "packets: a mirror's HTTPS downloads (tls_mirror.py)|$hm|$bin packets $hm|tshark -n -r $hm"
        "packets: a mirror's HTTP calls (http_mirror.py)|$hp|$bin packets $hp|tshark -n -r $hp"
        "packets -Y 'http.response.code == 200' (answers)|$hp|$bin packets $hp -Y 'http.response.code == 200'|tshark -n -r $hp -Y 'http.response.code == 200'"
        "packets -Y 'tls.handshake.type == 1' (Client Hellos)|$hm|$bin packets $hm -Y 'tls.handshake.type == 1'|tshark -n -r $hm -Y 'tls.handshake.type == 1'"
        "packets -Y 'dhcp.option.dhcp == 6' (refused leases)|$dsc|$bin packets $dsc -Y 'dhcp.option.dhcp == 6'|tshark -n -r $dsc -Y 'dhcp.option.dhcp == 6'"
        "report: a mirror's TCP conversations|$tm|$bin $tm --json|tshark -n -r $tm -q -z conv,tcp -z io,phs -z expert"
        "packets -Y ... -w: one QP's frames written as a capture|$f|$bin packets $f -Y 'bth.destqp == 0x00401d' -w $out/qp.pcapng|tshark -n -r $f -Y 'infiniband.bth.destqp == 0x00401d' -w $out/qp-tshark.pcapng"
        "report for 80 columns (--width 80 --all)|$f|$bin $f --all --width 80|tshark -n -r $f -q -z conv,udp"
        "report --timeline (RTT, completion, rates)|$f|$bin $f --json --timeline|tshark -n -r $f -T fields -e frame.time_epoch -e frame.len ${fields[*]:2} -e infiniband.aeth.syndrome"
        "NVMe-oF I/O latencies (gen --scenario nvme)|$nv|$bin $nv --json|tshark -n -r $nv -T fields -e frame.number -e nvme.cmd.cid -e nvme.cqe.cid -e nvme.cqe.status -e nvme.cmd_latency"
        "packets -Y nvme (NVMe commands, responses, data)|$nv|$bin packets $nv -Y nvme|tshark -n -r $nv -Y nvme"
        "report --html (the page with its charts)|$f|$bin $f --html $out/report.html|tshark -n -r $f -T fields -e frame.time_epoch -e ip.src -e ip.dst -e infiniband.bth.destqp -e infiniband.bth.psn -e frame.len"
        "plan dcqcn --from (a flow's CNPs replayed)|$dc|$bin plan dcqcn --from $dc --flow 10.0.2.3,10.0.3.1,0x5005 --params paper --json|tshark -n -r $dc -T fields -e frame.time_epoch -e ip.src -e ip.dst -e infiniband.bth.destqp -e infiniband.bth.opcode -e frame.len"
        "fabric: 4 links (the quarters) on one clock|${parts[0]}|$bin fabric ${parts[*]} --json|$t_cmd_pfc"
        "export: Parquet, 8 tables (tshark: CSV)|$f|rm -rf $out/dataset && $bin export $f -o $out/dataset|$t_cmd_csv")
    echo
    echo "## other inputs, the same frames: roce-dissect against the tool a user would otherwise run"
    printf '%-44s %9s %8s %11s %8s %9s\n' "input" "ours s" "RSS MiB" "theirs s" "RSS MiB" "speed-up"
    local row label file ours theirs
    for row in "${rows[@]}"; do
        IFS='|' read -r label file ours theirs <<< "$row"
        want "$label" || continue
        local o_best=999999 t_best=999999 o_kib=0 t_kib=0 secs kib r
        for r in $(seq "$runs"); do
            read -r secs kib <<< "$(measure "$file" $(( r == 1 )) bash -c "$ours")"
            o_best=$(python3 -c "print(min($o_best, $secs))"); [ "$kib" -gt "$o_kib" ] && o_kib=$kib
        done
        local t_n=0
        if [ $have_tshark = 1 ]; then
            t_n=${TSHARK_RUNS:-$([ "$n" -ge 2000000 ] && echo 1 || echo "$runs")}
            for r in $(seq "$t_n"); do
                read -r secs kib <<< "$(measure "$file" $(( r == 1 )) bash -c "$theirs")"
                t_best=$(python3 -c "print(min($t_best, $secs))"); [ "$kib" -gt "$t_kib" ] && t_kib=$kib
            done
        fi
        python3 - "$label" "$o_best" "$o_kib" "$t_best" "$t_kib" "$t_n" <<'PY'
import sys
label, o, ok, t, tk, tn = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
if tn:
    print(f"{label:<44} {o:9.3f} {ok//1024:8} {t:11.3f} {tk//1024:8} {t/max(o,0.005):8.0f}x")
else:
    print(f"{label:<44} {o:9.3f} {ok//1024:8} {'-':>11} {'-':>8} {'-':>9}")
PY
    done
    echo "(RSS of a pipeline: its largest process, as getrusage sees bash -c's children)"
}

# shapes: the third table (see the top). Each shape's capture is made once
# by `gen` (kept in bench/out); its rows are timed in rounds like the
# first table's: cat, the memory floor, the report, tshark.
shapes() {
    local t_runs=${TSHARK_RUNS:-$runs}
    # label|file|gen arguments (empty: made by the first table)
    local list=(
        "900-byte frames: mixed, 256 QPs, 4 KiB messages over a 1 KiB PMTU|$out/bench-500000.pcap|--scenario mixed --seed 1 --qps 256 --messages 391 --size 4096 --pmtu 1024"
        "small frames: incast, 512 B payloads, ACK every 4, CE/CNP/PFC|$out/small-500000.pcap|--scenario incast --seed 1 --qps 256 --messages 390 --size 2048 --pmtu 512 --ack-every 4"
        "4 096 QPs interleaved (8 592 flows with the CM's)|$out/qps4096-500000.pcap|--scenario clean --seed 1 --qps 4096 --messages 58 --size 1024 --pmtu 1024"
        "65 536 QPs interleaved (131 472 flows)|$out/qps65536-500000.pcap|--scenario clean --seed 1 --qps 65536 --messages 2 --size 1024 --pmtu 1024"
        "4 096 QPs congested: incast, CNPs to 4 002 of 4 096 senders|$out/incast4096-500000.pcap|--scenario incast --seed 1 --qps 4096 --messages 24 --size 2048 --pmtu 512 --ack-every 4"
        "NVMe-oF: 8 I/O queues, reads and writes|$out/nvme-500000.pcap|--scenario nvme --seed 1 --qps 8 --messages 10205"
        "PFC-heavy: 4 000 pause intervals|$out/pfc-500000.pcap|--scenario pfc-headroom --seed 1 --messages 5300"
        "5 M frames, 4.3 GiB (the 900-byte shape)|$out/bench-5000000.pcap|--scenario mixed --seed 1 --qps 256 --messages 3907 --size 4096 --pmtu 1024")
    echo
    echo "## shapes: the report (--json) on other traffic, beside cat, the memory floor and tshark"
    printf '%-66s %8s %8s %7s %9s %9s %8s %8s %9s %8s %8s\n' "shape" "frames" "cat s" "floor s" "ours s" "median s" "RSS MiB" "x cat" "split2 s" "tshark s" "speed-up"
    local row label f args
    for row in "${list[@]}"; do
        IFS='|' read -r label f args <<< "$row"
        if [ -n "${SHAPES:-}" ] && ! grep -qE -- "$SHAPES" <<< "$label"; then continue; fi
        # shellcheck disable=SC2086
        [ -f "$f" ] || quiet $bin gen $args -o "$f"
        local n; n=$(frames_of "$f")
        local t_n=$t_runs
        [ "$n" -ge 2000000 ] && t_n=${TSHARK_RUNS:-1}
        local cat_t=() floor_t=() ours_t=() split_t=() tsh_t=() kib=0 tkib=0 secs k r
        local rounds=$(( runs > t_n ? runs : t_n ))
        for r in $(seq "$rounds"); do
            if [ "$r" -le "$runs" ]; then
                read -r secs _ <<< "$(measure "$f" 0 cat "$f")"; cat_t+=("$secs")
                read -r secs _ <<< "$(measure "$f" 0 $floor "$f")"; floor_t+=("$secs")
                read -r secs k <<< "$(measure "$f" $(( r == 1 )) $bin "$f" --json)"; ours_t+=("$secs")
                [ "$k" -gt "$kib" ] && kib=$k
                # Host pairs analysed on 2 threads side by side.
                read -r secs _ <<< "$(measure "$f" 0 $bin "$f" --json --analysis-threads 2)"; split_t+=("$secs")
            fi
            if [ $have_tshark = 1 ] && [ "$r" -le "$t_n" ]; then
                read -r secs k <<< "$(measure "$f" $(( r == 1 )) tshark -n -r "$f" -T fields \
                    -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn)"
                tsh_t+=("$secs"); [ "$k" -gt "$tkib" ] && tkib=$k
            fi
        done
        python3 - "$label" "$n" "$kib" "${cat_t[*]}" "${floor_t[*]}" "${ours_t[*]}" "${split_t[*]}" "${tsh_t[*]:-}" <<'PY'
import statistics, sys
label, n, kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cat, floor, ours, split = ([float(x) for x in a.split()] for a in sys.argv[4:8])
tsh = [float(x) for x in sys.argv[8].split()]
o = max(min(ours), 0.005)
line = (f"{label:<66} {n:8} {min(cat):8.3f} {min(floor):7.3f} {min(ours):9.3f} "
        f"{statistics.median(ours):9.3f} {kib // 1024:8} {o / max(min(cat), 0.005):7.1f}x {min(split):9.3f}")
if tsh:
    line += f" {min(tsh):8.2f} {min(tsh) / o:7.0f}x (median {statistics.median(tsh) / max(statistics.median(ours), 0.005):.0f}x)"
print(line)
PY
    done
}

# The ICRC fold's speed depends on these (crates/crc32fold picks the best).
simd=$(grep -m1 -o -w -E 'avx512vl|vpclmulqdq' /proc/cpuinfo 2>/dev/null | sort -u | xargs || true)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) (${simd:-no avx512vl or vpclmulqdq}), $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "roce-dissect $($bin --version | cut -d' ' -f2), $(tshark --version 2>/dev/null | head -1 | cut -d' ' -f1-3 || echo 'no tshark')"
if [ $have_tshark = 0 ]; then t_note="not run"
elif [ -n "${TSHARK_RUNS:-}" ]; then t_note="$TSHARK_RUNS runs"; else t_note="$runs runs, 1 on 5 M frames"; fi
# What a second core is worth here when both work (see examples/core_share.rs):
# on a shared VM the memory's bandwidth, or the core itself, may be shared.
target/release/examples/core_share 3 | sed '1d; s/^/per core at once: /'
echo "times: best and median of $runs runs (tshark: $t_note), in rounds, page cache warm, each by a nanosecond clock"
for n in "${sizes[@]}"; do
    f=$out/bench-$n.pcap
    per_qp=$(( n / 256 / 5 + 1 ))
    if [ ! -f "$f" ]; then
        read -r g_s _ <<< "$(measure /dev/null 0 $bin gen --scenario mixed --seed 1 --qps 256 --messages "$per_qp" \
            --size 4096 --pmtu 1024 -o "$f")"
        gen_frames=$(frames_of "$f")
        python3 -c "print(f'generated $gen_frames frames in $g_s s ({$gen_frames/max($g_s,0.001)/1e6:.2f} M frames/s)')"
    fi
    ng=$out/bench-$n.pcapng
    if [ ! -f "$ng" ]; then
        quiet $bin gen --scenario mixed --seed 1 --qps 256 --messages "$per_qp" \
            --size 4096 --pmtu 1024 --format pcapng -o "$ng"
    fi
    if [ -n "${NO_MAIN:-}" ]; then
        if [ -z "${NO_OTHER:-}" ]; then other_inputs "$n" "$f" "$per_qp"; fi
        continue
    fi
    evict "$f"
    frames=$(frames_of "$f")
    ng_frames=$(frames_of "$ng")
    [ "$ng_frames" = "$frames" ] || echo "warning: $ng holds $ng_frames frames, $f $frames" >&2
    size_mb=$(( $(stat -c %s "$f") / 1024 / 1024 ))
    cat "$f" > "$f.written"
    # The rows: label, file kept warm, command.
    labels=("cat FILE > /dev/null"
        "read FILE mapped, every core (memory floor)"
        "roce-dissect FILE --json"
        "roce-dissect FILE --json, a copy cached as cat wrote it"
        "roce-dissect FILE (text report)"
        "roce-dissect FILE --json --threads 1"
        "roce-dissect packets FILE --json"
        "roce-dissect FILE --json, the frames as pcapng")
    # run_row ROW ROUND
    run_row() {
        case $1 in
            0) measure "$f" 1 cat "$f" ;;
            1) measure "$f" 1 $floor "$f" ;;
            2) measure "$f" 1 $bin "$f" --json ;;
            3) measure "$f.written" 1 $bin "$f.written" --json ;;
            4) measure "$f" 1 $bin "$f" ;;
            5) measure "$f" 1 $bin "$f" --json --threads 1 ;;
            6) measure "$f" 1 $bin packets "$f" --json ;;
            7) measure "$ng" 1 $bin "$ng" --json ;;
            8) measure "$f" $(( $2 == 1 )) tshark -n -r "$f" -T fields \
                   -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn ;;
        esac
    }
    t_runs=0
    if [ $have_tshark = 1 ]; then
        labels+=("tshark -T fields -e bth.opcode -e bth.destqp -e bth.psn")
        t_runs=${TSHARK_RUNS:-$([ "$n" -ge 2000000 ] && echo 1 || echo "$runs")}
    fi
    all_s=(); max_kib=()
    rounds=$(( runs > t_runs ? runs : t_runs ))
    for r in $(seq "$rounds"); do
        echo "  round $r of $rounds" >&2
        for i in "${!labels[@]}"; do
            if [ "$i" = 8 ]; then [ "$r" -le "$t_runs" ] || continue
            else [ "$r" -le "$runs" ] || continue; fi
            read -r secs kib <<< "$(run_row "$i" "$r")"
            all_s[$i]="${all_s[$i]:-} $secs"
            [ "$kib" -gt "${max_kib[$i]:-0}" ] && max_kib[$i]=$kib
        done
    done
    rm -f "$f.written"

    echo
    echo "## $f: $frames frames, $size_mb MiB"
    printf '%-58s %9s %9s %13s %9s %9s\n' "command" "best s" "median s" "frames/s" "vs cat" "RSS MiB"
    # Each command's best and median time.
    best_s=(); med_s=()
    for i in "${!labels[@]}"; do
        # shellcheck disable=SC2086
        read -r "best_s[$i]" "med_s[$i]" <<< "$(python3 -c 'import statistics, sys
t = [float(x) for x in sys.argv[1:]]
print(min(t), statistics.median(t))' ${all_s[$i]})"
    done
    cat_s=${best_s[0]}
    for i in "${!labels[@]}"; do
        python3 - "${labels[$i]}" "${best_s[$i]}" "${med_s[$i]}" "$(( max_kib[i] / 1024 ))" "$frames" "$cat_s" <<'PY'
import sys
label, secs, med, mib, frames, cat = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], int(sys.argv[5]), float(sys.argv[6])
s = max(secs, 0.005)
print(f"{label:<58} {secs:9.3f} {med:9.3f} {frames/s/1e6:11.2f} M {s/max(cat,0.005):8.1f}x {mib:>9}")
PY
    done
    if [ $have_tshark = 1 ]; then
        python3 - "${best_s[8]}" "${best_s[2]}" "${best_s[6]}" "$cat_s" "${best_s[1]}" "$(( max_kib[2] / 1024 ))" \
            "${med_s[8]}" "${med_s[2]}" <<'PY'
import sys
t, a, p, c, m = (max(float(x), 0.005) for x in sys.argv[1:6])
rss = int(sys.argv[6])
tm, am = (max(float(x), 0.005) for x in sys.argv[7:9])
print(f"analysis is {t/a:.0f}x faster than tshark field extraction, best against best "
      f"({tm/am:.0f}x median against median; target 200x); "
      f"{a/c:.1f}x the time of cat (target 3x); peak RSS {rss} MiB (target 64); "
      f"packets --json is {t/p:.0f}x faster than tshark; reading the file on every core "
      f"alone takes {m/a:.0%} of the analysis's time")
PY
    fi
    if [ -z "${NO_OTHER:-}" ]; then other_inputs "$n" "$f" "$per_qp"; fi
done
if [ -z "${NO_SHAPES:-}" ]; then shapes; fi
