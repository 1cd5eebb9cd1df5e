#!/usr/bin/env python3
"""A mirror's name service for bench/compare.sh: N frames of DNS lookups
and their answers (A, AAAA and PTR questions from 1 000 hosts to two
resolvers; answers with a CNAME and addresses, compressed names; one
lookup in 20 fails with "No such name"), mDNS announcements (PTR, SRV,
TXT, A with cache flush) and LLMNR questions, interleaved. Deterministic;
classic pcap, microsecond timestamps.

    bench/dns_mirror.py N OUT.pcap
"""

import struct
import sys


def name(n):
    out = b""
    for label in n.split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\x00"


def message(ident, flags, questions, answers=(), additional=()):
    head = struct.pack(">HHHHHH", ident, flags, len(questions), len(answers), 0, len(additional))
    return head + b"".join(questions) + b"".join(answers) + b"".join(additional)


def question(n, t, cls=1):
    return name(n) + struct.pack(">HH", t, cls)


def record(owner, t, rdata, cls=1, ttl=300):
    # `owner` is wire form already (a name or a pointer).
    return owner + struct.pack(">HHIH", t, cls, ttl, len(rdata)) + rdata


def frame(src, dst, sport, dport, payload, dst_mac=b"\x02\x00\x00\x00\x00\x0b"):
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0x4000, 64, 17, 0, src, dst)
    return dst_mac + b"\x02\x00\x00\x00\x00\x0a\x08\x00" + ip + udp


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    resolvers = [bytes([10, 0, 0, 53]), bytes([10, 0, 1, 53])]
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        written = 0
        i = 0
        while written < n:
            host = bytes([10, 1, (i // 250) % 4, 1 + i % 250])
            resolver = resolvers[i % 2]
            port = 40000 + i % 20000
            ident = i & 0xFFFF
            kind = i % 10
            frames = []
            if kind < 7:
                qname = "node%d.cluster%d.example.com" % (i % 1000, i % 7)
                qtype = 28 if kind % 3 == 1 else 1
                q = question(qname, qtype)
                frames.append(frame(host, resolver, port, 53, message(ident, 0x0100, [q])))
                if i % 20 == 19:
                    resp = message(ident, 0x8183, [q])
                else:
                    target = name("gpu%d.rack%d.example.com" % (i % 1000, i % 16))
                    rdata = bytes([10, 2, i % 256, 1 + i % 200]) if qtype == 1 else bytes(15) + bytes([1 + i % 200])
                    answers = [record(b"\xc0\x0c", 5, target), record(b"\xc0\x0c", qtype, rdata)]
                    resp = message(ident, 0x8180, [q], answers)
                frames.append(frame(resolver, host, 53, port, resp))
            elif kind == 7:
                rev = "%d.%d.1.10.in-addr.arpa" % (1 + i % 250, (i // 250) % 4)
                q = question(rev, 12)
                frames.append(frame(host, resolver, port, 53, message(ident, 0x0100, [q])))
                answer = record(b"\xc0\x0c", 12, name("node%d.example.com" % (i % 1000)))
                frames.append(frame(resolver, host, 53, port, message(ident, 0x8180, [q], [answer])))
            elif kind == 8:
                inst = "gpu%d._ssh._tcp.local" % (i % 1000)
                hostname = "gpu%d.local" % (i % 1000)
                srv = struct.pack(">HHH", 0, 0, 22) + name(hostname)
                answers = [
                    record(name("_ssh._tcp.local"), 12, name(inst), ttl=4500),
                    record(name(inst), 33, srv, cls=0x8001, ttl=120),
                    record(name(inst), 16, b"\x00", cls=0x8001, ttl=4500),
                    record(name(hostname), 1, host, cls=0x8001, ttl=120),
                ]
                mdns = message(0, 0x8400, [], answers)
                frames.append(frame(host, bytes([224, 0, 0, 251]), 5353, 5353, mdns, b"\x01\x00\x5e\x00\x00\xfb"))
            else:
                q = question("WPAD%d" % (i % 50), 1)
                llmnr = message(ident, 0, [q])
                frames.append(frame(host, bytes([224, 0, 0, 252]), port, 5355, llmnr, b"\x01\x00\x5e\x00\x00\xfc"))
            for data in frames:
                if written >= n:
                    break
                ts = written * 20
                f.write(struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, len(data), len(data)))
                f.write(data)
                written += 1
            i += 1


if __name__ == "__main__":
    main()
