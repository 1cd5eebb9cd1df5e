use super::*;

fn rec(t: u8, body: &[u8]) -> Vec<u8> {
    let mut r = vec![t, 3, 3];
    r.extend((body.len() as u16).to_be_bytes());
    r.extend(body);
    r
}

#[test]
fn ports_choose_as_tshark_does() {
    assert_eq!(Selection::of_ports(40000, 443), Some(Selection::Port));
    assert_eq!(Selection::of_ports(3389, 51195), Some(Selection::Heuristic));
    assert_eq!(Selection::of_ports(80, 443), None);
    assert_eq!(Selection::of_ports(22, 50000), None);
    assert!(PORTS.windows(2).all(|w| w[0] < w[1]));
    assert!(OTHER_PORTS.windows(2).all(|w| w[0] < w[1]));
    assert!(APPLICATIONS.windows(2).all(|w| w[0].0 < w[1].0));
    assert_eq!(application(443, 50000), Some("Hypertext Transfer Protocol"));
    assert_eq!(application(50000, 5001), None);
}

#[test]
fn a_record_across_segments_is_followed() {
    let a = rec(23, &[0; 3000]);
    let b = rec(23, &[0; 30]);
    let stream: Vec<u8> = [&a[..], &b, &a, &b].concat();
    let cuts = [0, 1000, 2000, 3050, 6070, stream.len()];
    let mut c = Conversation::default();
    let mut said = Vec::new();
    for w in cuts.windows(2) {
        let p = &stream[w[0]..w[1]];
        let seen = c.segment(
            0,
            1 + w[0] as u32,
            p.len() as u32,
            false,
            &Digest::of(p, Selection::Port).unwrap(),
        );
        let r = read(p, &seen);
        let mut s = String::new();
        for (i, x) in r.records.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            x.says.write(&mut s);
        }
        said.push((r.protocol, r.shown, s));
    }
    assert_eq!(
        said,
        [
            ("TCP", Shown::RecordStarts, String::new()),
            ("TCP", Shown::PartOfRecord, String::new()),
            (
                "TLSv1.2",
                Shown::Records,
                "Application Data, Application Data".into()
            ),
            ("TLSv1.2", Shown::Records, "Application Data".into()),
            ("TLSv1.2", Shown::Records, "Application Data".into()),
        ]
    );
}

#[test]
fn hellos_are_read() {
    assert_eq!(handshake_name(2), Some("Server Hello"));
    assert_eq!(version_label(0), "SSL");
    assert!(looks_like_record(&rec(23, &[1])));
    assert!(!looks_like_record(&rec(20, &[1])));
}
