#!/usr/bin/env python3
"""A mirror's HTTP for bench/compare.sh: N frames of REST calls on 1 000
keep-alive HTTP/1.1 connections, interleaved: three in four to port 80,
the rest to a service on port 40541 (which tshark finds by its
heuristic). Each opens with TCP's handshake; then the client sends GETs
(a head of a few headers in one segment) and the server answers each
with a JSON body of 2 000 to 9 000 bytes by Content-Length, in segments
of 1 448, so a message's head and body end inside segments and most
responses span several; one response in ten is chunked. The client
acknowledges every other segment. Deterministic; classic pcap,
microsecond timestamps.

    bench/http_mirror.py N OUT.pcap
"""

import random
import struct
import sys

MSS = 1448


def frame(src, dst, sport, dport, seq, ack, flags, window, payload=b""):
    tcp = struct.pack(">HHIIHHHH", sport, dport, seq, ack, 5 << 12 | flags, window, 0, 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, src, dst)
    return b"\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a\x08\x00" + ip + tcp


def response(rng, k):
    body = b'{"items": [' + b", ".join(b'{"id": %d, "v": "%s"}' % (i, b"x" * 20) for i in range(rng.randint(60, 280))) + b"]}"
    if k % 10 == 9:
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 1000]), body[i:i + 1000]) for i in range(0, len(body), 1000))
        head = b"HTTP/1.1 200 OK\r\nServer: api/1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        return head + chunks + b"0\r\n\r\n"
    head = b"HTTP/1.1 200 OK\r\nServer: api/1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    return head + body


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(1)
    conns = 1000
    state = []
    for c in range(conns):
        state.append({
            "c": bytes([10, 1, c // 250, 1 + c % 250]),
            "s": bytes([10, 2, 0, 1 + c % 8]),
            "cport": 40000 + c,
            "sport": 80 if c % 4 else 40541,
            "cseq": 1000 * c + 1,
            "sseq": 7001,
            "queue": [],
            "k": 0,
            "unacked": 0,
        })
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
            put(frame(st["c"], st["s"], st["cport"], st["sport"], st["cseq"] - 1, 0, 0x002, 64240))
            put(frame(st["s"], st["c"], st["sport"], st["cport"], st["sseq"] - 1, st["cseq"], 0x012, 65160))
            put(frame(st["c"], st["s"], st["cport"], st["sport"], st["cseq"], st["sseq"], 0x010, 502))
        k = 0
        while written < n:
            st = state[k % conns]
            k += 1
            if not st["queue"]:
                st["k"] += 1
                get = b"GET /api/items?page=%d HTTP/1.1\r\nHost: 10.2.0.%d\r\nUser-Agent: bench/1\r\nAccept: application/json\r\n\r\n" % (st["k"], 1 + k % 8)
                put(frame(st["c"], st["s"], st["cport"], st["sport"], st["cseq"], st["sseq"], 0x018, 502, get))
                st["cseq"] += len(get)
                msg = response(rng, st["k"])
                st["queue"] = [msg[i:i + MSS] for i in range(0, len(msg), MSS)]
                continue
            seg = st["queue"].pop(0)
            put(frame(st["s"], st["c"], st["sport"], st["cport"], st["sseq"], st["cseq"], 0x018, 2000, seg))
            st["sseq"] += len(seg)
            st["unacked"] += 1
            if st["unacked"] == 2 or not st["queue"]:
                put(frame(st["c"], st["s"], st["cport"], st["sport"], st["cseq"], st["sseq"], 0x010, 502))
                st["unacked"] = 0


if __name__ == "__main__":
    main()
