#!/usr/bin/env python3
"""A mirror's HTTPS for bench/compare.sh: N frames of downloads on 1 000
TLS 1.3 connections to port 443, interleaved. Each opens with TCP's
handshake and TLS's (a Client Hello naming its server, the Server Hello
with Change Cipher Spec and the encrypted rest, the client's Finished and
request), then the server sends records of 16 KiB of encrypted-looking
bytes in segments of 1 448, so records begin and end inside segments;
the client acknowledges every other segment. One server segment in 50 is
lost on the way and sent again after three duplicate ACKs. Deterministic;
classic pcap, microsecond timestamps.

    bench/tls_mirror.py N OUT.pcap
"""

import random
import struct
import sys

MSS = 1448


def frame(src, dst, sport, dport, seq, ack, flags, window, payload=b""):
    tcp = struct.pack(">HHIIHHHH", sport, dport, seq, ack, 5 << 12 | flags, window, 0, 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, src, dst)
    return b"\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a\x08\x00" + ip + tcp


def record(content_type, body, version=0x0303):
    return struct.pack(">BHH", content_type, version, len(body)) + body


def handshake(kind, body):
    return bytes([kind]) + len(body).to_bytes(3, "big") + body


def extension(kind, body):
    return struct.pack(">HH", kind, len(body)) + body


def client_hello(name):
    sni = struct.pack(">HBH", len(name) + 3, 0, len(name)) + name
    exts = extension(0, sni) + extension(43, b"\x04\x03\x04\x03\x03")
    body = b"\x03\x03" + bytes(32) + b"\x20" + bytes(32) + b"\x00\x04\x13\x01\x13\x02\x01\x00"
    return record(22, handshake(1, body + struct.pack(">H", len(exts)) + exts), 0x0301)


def server_hello():
    exts = extension(43, b"\x03\x04")
    body = b"\x03\x03" + bytes(32) + b"\x20" + bytes(32) + b"\x13\x01\x00"
    return record(22, handshake(2, body + struct.pack(">H", len(exts)) + exts))


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(1)
    # Encrypted records: bytes that look random, drawn once and reused.
    pool = rng.randbytes(1 << 20)
    conns = 1000
    state = []
    for c in range(conns):
        state.append({
            "c": bytes([10, 1, c // 250, 1 + c % 250]),
            "s": bytes([10, 2, 0, 1 + c % 8]),
            "port": 40000 + c,
            "cseq": 1000 * c + 1,
            "sseq": 7000 + 1000 * c + 1,
            "stream": b"",
            "at": 0,
            "sent": 0,
            "lost": None,
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

        def client(st, payload=b"", flags=0x018):
            put(frame(st["c"], st["s"], st["port"], 443, st["cseq"], st["sseq"], flags, 502, payload))
            st["cseq"] += len(payload)

        def server(st, payload, flags=0x018):
            put(frame(st["s"], st["c"], 443, st["port"], st["sseq"], st["cseq"], flags, 2000, payload))
            st["sseq"] += len(payload)

        for k, st in enumerate(state):
            put(frame(st["c"], st["s"], st["port"], 443, st["cseq"] - 1, 0, 0x002, 64240))
            put(frame(st["s"], st["c"], 443, st["port"], st["sseq"] - 1, st["cseq"], 0x012, 65160))
            client(st, flags=0x010)
            client(st, client_hello(b"host-%d.example" % k))
            ccs = record(20, b"\x01")
            server(st, server_hello() + ccs + record(23, pool[k : k + 1100]) + record(23, pool[k + 1 : k + 80]))
            client(st, ccs + record(23, pool[k + 2 : k + 60]) + record(23, pool[k + 3 : k + 400]))
        k = 0
        while written < n:
            st = state[k % conns]
            k += 1
            # The download: 16 KiB records, cut into segments.
            while len(st["stream"]) - st["at"] < MSS:
                o = rng.randrange(len(pool) - 16400)
                st["stream"] = st["stream"][st["at"]:] + record(23, pool[o : o + 16401])
                st["at"] = 0
            payload = st["stream"][st["at"] : st["at"] + MSS]
            st["at"] += MSS
            seq = st["sseq"]
            st["sent"] += 1
            if st["sent"] % 50 == 0:
                st["lost"] = (seq, payload)  # never captured
                st["sseq"] += len(payload)
            else:
                server(st, payload)
            if st["lost"] is not None and st["sent"] % 50 == 3:
                for _ in range(3):
                    put(frame(st["c"], st["s"], st["port"], 443, st["cseq"], st["lost"][0], 0x010, 502))
                lseq, lpay = st["lost"]
                put(frame(st["s"], st["c"], 443, st["port"], lseq, st["cseq"], 0x018, 2000, lpay))
                st["lost"] = None
                put(frame(st["c"], st["s"], st["port"], 443, st["cseq"], st["sseq"], 0x010, 502))
            elif st["sent"] % 2 == 0 and st["lost"] is None:
                put(frame(st["c"], st["s"], st["port"], 443, st["cseq"], st["sseq"], 0x010, 502))


if __name__ == "__main__":
    main()
