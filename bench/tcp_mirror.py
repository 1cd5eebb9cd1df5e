#!/usr/bin/env python3
"""A mirror's TCP for bench/compare.sh: N frames of bulk transfers on
1 000 connections, interleaved, each opened by a handshake (window scale 7)
and acknowledged every other segment; one segment in 50 is lost on the way
and sent again after three duplicate ACKs, so tshark's TCP analysis has
notes to make (previous segment not captured, duplicate ACKs, fast
retransmissions). Deterministic; classic pcap, microsecond timestamps.

    bench/tcp_mirror.py N OUT.pcap [PORT]

PORT is the servers' port (5201, iperf3's, by default); 22 makes the
transfers SSH sessions captured after their key exchange (scp's bulk
copies), whose every data segment is an encrypted packet.
"""

import struct
import sys


def frame(src, dst, sport, dport, seq, ack, flags, window, options=b"", payload=b""):
    tcp = struct.pack(">HHIIHHHH", sport, dport, seq, ack, ((20 + len(options)) // 4) << 12 | flags, window, 0, 0)
    tcp += options + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, src, dst)
    return b"\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a\x08\x00" + ip + tcp


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 5201
    conns = 1000
    payload = bytes(200)
    syn_opts = bytes([2, 4, 5, 0xB4, 1, 3, 3, 7])
    state = []
    for c in range(conns):
        client = bytes([10, 1, c // 250, 1 + c % 250])
        server = bytes([10, 2, 0, 1 + c % 8])
        state.append({"c": client, "s": server, "port": 40000 + c, "seq": 1000 * c + 1, "sent": 0, "lost": None})
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        written = 0
        t = 0

        def put(data):
            nonlocal written, t
            t += 1
            f.write(struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(data), len(data)))
            f.write(data)
            written += 1

        for st in state:
            put(frame(st["c"], st["s"], st["port"], port, st["seq"] - 1, 0, 0x002, 64240, syn_opts))
            put(frame(st["s"], st["c"], port, st["port"], 7000, st["seq"], 0x012, 65160, syn_opts))
            put(frame(st["c"], st["s"], st["port"], port, st["seq"], 7001, 0x010, 502))
        k = 0
        while written < n:
            st = state[k % conns]
            k += 1
            seq = st["seq"]
            st["seq"] += len(payload)
            st["sent"] += 1
            if st["sent"] % 50 == 0:
                st["lost"] = seq  # never captured
            else:
                put(frame(st["c"], st["s"], st["port"], port, seq, 7001, 0x018, 502, payload=payload))
            if st["lost"] is not None and st["sent"] % 50 == 3:
                for _ in range(3):
                    put(frame(st["s"], st["c"], port, st["port"], 7001, st["lost"], 0x010, 2000))
                put(frame(st["c"], st["s"], st["port"], port, st["lost"], 7001, 0x018, 502, payload=payload))
                st["lost"] = None
                put(frame(st["s"], st["c"], port, st["port"], 7001, st["seq"], 0x010, 2000))
            elif st["sent"] % 2 == 0 and st["lost"] is None:
                put(frame(st["s"], st["c"], port, st["port"], 7001, st["seq"], 0x010, 2000))


if __name__ == "__main__":
    main()
