//! `/`: words to look for in the flows' addresses, or a display filter
//! over the frames of the list in view.

use super::{App, DisplayFilter, Scope, View};
use crate::dissect::dissect;
use crate::tui::index::NO_FLOW;

impl App {
    /// Starts with a display filter applied (`tui -Y FILTER`), as if it
    /// had been typed after `/` (`↑` in the filter bar brings it back).
    pub fn start_with_filter(&mut self, text: &str) {
        self.last_filter = text.to_string();
        self.apply_filter(text.to_string());
    }

    /// Applies what was typed after `/`: a display filter (every frame read
    /// again and tested, with what the analysis found in it), or words to
    /// look for in the flows' addresses and QPs; empty clears both.
    pub(super) fn apply_filter(&mut self, mut text: String) {
        self.flow_sel = 0;
        // Spaces at the end mean nothing (and would show in the title).
        text.truncate(text.trim_end().len());
        // A frame list takes display filters only (words would search the
        // flows table, which is not on screen): the parser says what is
        // wrong with words there.
        let in_list = matches!(self.view(), View::Packets(_));
        if text.trim().is_empty() || (!in_list && !looks_like_filter(&text)) {
            self.display = None;
            self.filter = text;
            self.rebuild_flow_rows();
            self.relist_packets();
            return;
        }
        let filter = match crate::filter::Filter::parse(&text) {
            Ok(f) => f,
            Err(_) if in_list && !looks_like_filter(&text) => {
                self.status = words_in_a_list(&text);
                return;
            }
            Err(e) => {
                self.status = format!("display filter: {e}");
                return;
            }
        };
        let n = self.index.len();
        let mut frames = vec![false; n];
        let mut flows = vec![false; self.report.flows.len()];
        let mut matched = 0u64;
        let (mut first, mut prev) = (self.index.first_ts_ns, self.index.first_ts_ns);
        for pos in 0..n as u32 {
            let Some(frame) = self.read(pos) else {
                break;
            };
            let f = frame.as_frame();
            let p = dissect(&f, &self.dissect_opts);
            if pos == 0 {
                first = p.ts_ns;
                prev = p.ts_ns;
            }
            let flow = self
                .index
                .flows
                .get(pos as usize)
                .copied()
                .unwrap_or(NO_FLOW);
            let found = crate::analysis::FrameAnalysis {
                flow,
                marks: self
                    .index
                    .marks
                    .get(pos as usize)
                    .copied()
                    .unwrap_or_default(),
                missing: self.index.counts.get(&pos).map_or(0, |c| c.0),
                episode: self.index.counts.get(&pos).map_or(0, |c| c.1),
                ack_rtt_ns: self.index.timing.get(&pos).and_then(|t| t.0),
                completion_ns: self.index.timing.get(&pos).and_then(|t| t.1),
                nvme: self.index.nvme.get(&pos).copied(),
            };
            let ctx = crate::fields::Ctx {
                pkt: &p,
                analysis: Some(&found),
                tcp: self.index.tcp.get(&pos),
                flow_number: (flow != NO_FLOW).then_some(u64::from(flow) + 1),
                first_ts_ns: first,
                prev_ts_ns: prev,
                link: self.link_speed,
            };
            prev = p.ts_ns;
            if filter.matches(&ctx) {
                frames[pos as usize] = true;
                matched += 1;
                if let Some(x) = flows.get_mut(flow as usize) {
                    *x = true;
                }
            }
        }
        // The count first: a long filter gives way on a narrow terminal.
        self.status = format!(
            "{} of {} frames match display filter {}",
            crate::output::report::grouped(matched),
            crate::output::report::grouped(n as u64),
            filter.text(),
        );
        self.filter.clear();
        self.display = Some(DisplayFilter {
            filter,
            frames,
            flows,
            matched,
        });
        self.rebuild_flow_rows();
        // The selection on the first flow with a matching frame: a
        // connection is listed whole, and its first direction may have
        // none (the NAK is the responder's).
        if let Some(d) = &self.display
            && let Some(row) = self
                .flow_rows
                .iter()
                .position(|&f| d.flows.get(f).copied().unwrap_or(false))
        {
            self.flow_sel = row;
        }
        self.relist_packets();
        if in_list {
            self.say_list_matches();
        }
    }

    /// In a list of some frames (a flow's, a pause's) under a display
    /// filter, the bar counts the list's matches, then the capture's:
    /// "76 of 438 frames match" over a list that shows none of them read
    /// as a list that failed to show them. The counts first, as above.
    pub(super) fn say_list_matches(&mut self) {
        let (View::Packets(scope), Some(d)) = (self.view(), &self.display) else {
            return;
        };
        if scope == Scope::All {
            return;
        }
        self.status = format!(
            "{} of {} frames here ({} of {} in the capture) match display filter {}",
            crate::output::report::grouped(self.packet_list.len() as u64),
            crate::output::report::grouped(self.packet_scope_len as u64),
            crate::output::report::grouped(d.matched),
            crate::output::report::grouped(d.frames.len() as u64),
            d.filter.text(),
        );
    }
}

/// Whether `/`'s text is meant as a display filter rather than words to
/// look for in addresses: it has an operator, or its first word is a field.
fn looks_like_filter(text: &str) -> bool {
    text.contains(['=', '<', '>', '!', '&', '|', '(', '[', '{', '~', '^'])
        || text.split_whitespace().next().is_some_and(|w| {
            crate::fields::lookup(w).is_some()
                || ["not", "any", "all"]
                    .iter()
                    .any(|k| w.eq_ignore_ascii_case(k))
        })
}

/// What `/` says of words typed in a frame list, which takes display
/// filters only: the filter meant, when the first word is an address or a
/// QP.
fn words_in_a_list(text: &str) -> String {
    let w = text.split_whitespace().next().unwrap_or_default();
    let field = if w.parse::<std::net::Ipv4Addr>().is_ok() {
        Some("ip.addr")
    } else if w.parse::<std::net::Ipv6Addr>().is_ok() {
        Some("ipv6.addr")
    } else if w.strip_prefix("0x").map_or_else(
        || w.parse::<u32>().is_ok(),
        |h| u32::from_str_radix(h, 16).is_ok(),
    ) {
        Some("bth.destqp")
    } else {
        None
    };
    match field {
        Some(f) => {
            format!("\"{text}\" is not a display filter; a frame list takes one: {f} == {w}")
        }
        None => format!(
            "\"{text}\" is not a display filter; a frame list takes one (words search the flows table)"
        ),
    }
}
