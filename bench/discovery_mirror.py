#!/usr/bin/env python3
"""A mirror's management broadcasts for bench/compare.sh: N frames of
NetBIOS name queries and their answers from 1 000 Windows hosts (one in
ten answered "Requested name does not exist"), DHCP exchanges (Discover,
Offer, Request, ACK; one in 20 refused with a NAK), and SSDP discovery
(M-SEARCH, the devices' 200 OK answers, NOTIFY alive announcements),
interleaved. Deterministic; classic pcap, microsecond timestamps.

    bench/discovery_mirror.py N OUT.pcap
"""

import struct
import sys

BROADCAST = b"\xff\xff\xff\xff\xff\xff"


def frame(src, dst, sport, dport, payload, dst_mac=b"\x02\x00\x00\x00\x00\x0b"):
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, src, dst)
    return dst_mac + b"\x02\x00\x00\x00\x00\x0a\x08\x00" + ip + udp


def netbios_name(text, kind):
    raw = text.encode().ljust(15)[:15] + bytes([kind])
    return b"\x20" + b"".join(bytes([0x41 + (c >> 4), 0x41 + (c & 15)]) for c in raw) + b"\x00"


def nbns(ident, flags, questions=(), answers=()):
    head = struct.pack(">HHHHHH", ident, flags, len(questions), len(answers), 0, 0)
    return head + b"".join(questions) + b"".join(answers)


def bootp(op, xid, mac, msg_type, yiaddr=b"\x00\x00\x00\x00"):
    m = struct.pack(">BBBBIHH", op, 1, 6, 0, xid, 0, 0x8000) + bytes(4) + yiaddr + bytes(8)
    m += mac + bytes(10) + bytes(64) + bytes(128)
    options = bytes([53, 1, msg_type, 61, 7, 1]) + mac + bytes([12, 6]) + b"node01"
    return m + bytes([99, 130, 83, 99]) + options + b"\xff"


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    server = bytes([10, 0, 0, 1])
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        written = 0
        i = 0
        while written < n:
            host = bytes([10, 1, (i // 250) % 4, 1 + i % 250])
            mac = bytes([2, 0, 0x5E, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])
            kind = i % 10
            frames = []
            if kind < 5:
                name = netbios_name("NODE%04d" % (i % 1000), 0x20)
                q = name + struct.pack(">HH", 32, 1)
                bcast = bytes([10, 1, 3, 255])
                frames.append(frame(host, bcast, 137, 137, nbns(i & 0xFFFF, 0x0110, [q]), BROADCAST))
                if i % 10 == 4:
                    frames.append(frame(server, host, 137, 137, nbns(i & 0xFFFF, 0x8583)))
                else:
                    rdata = struct.pack(">H", 0x6000) + bytes([10, 2, i % 256, 1 + i % 200])
                    a = name + struct.pack(">HHIH", 32, 1, 300000, len(rdata)) + rdata
                    frames.append(frame(server, host, 137, 137, nbns(i & 0xFFFF, 0x8500, [], [a])))
            elif kind < 8:
                xid = (0xD18F0000 + i) & 0xFFFFFFFF
                zero, bcast = bytes(4), bytes([255, 255, 255, 255])
                offered = bytes([10, 3, i % 256, 1 + i % 200])
                frames.append(frame(zero, bcast, 68, 67, bootp(1, xid, mac, 1), BROADCAST))
                frames.append(frame(server, bcast, 67, 68, bootp(2, xid, mac, 2, offered), BROADCAST))
                frames.append(frame(zero, bcast, 68, 67, bootp(1, xid, mac, 3), BROADCAST))
                answer = 6 if i % 20 == 7 else 5
                frames.append(frame(server, bcast, 67, 68, bootp(2, xid, mac, answer, offered), BROADCAST))
            else:
                group = bytes([239, 255, 255, 250])
                gmac = b"\x01\x00\x5e\x7f\xff\xfa"
                port = 40000 + i % 20000
                search = (
                    b"M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\n"
                    b'MAN: "ssdp:discover"\r\nMX: 1\r\nST: ssdp:all\r\n\r\n'
                )
                frames.append(frame(host, group, port, 1900, search, gmac))
                ok = (
                    b"HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=1800\r\n"
                    b"LOCATION: http://10.0.0.9:80/desc.xml\r\nST: upnp:rootdevice\r\n"
                    b"USN: uuid:%08x::upnp:rootdevice\r\n\r\n" % i
                )
                frames.append(frame(server, host, 1900, port, ok))
                notify = (
                    b"NOTIFY * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\n"
                    b"NT: upnp:rootdevice\r\nNTS: ssdp:alive\r\nUSN: uuid:%08x\r\n\r\n" % i
                )
                frames.append(frame(server, group, 1900, 1900, notify, gmac))
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
