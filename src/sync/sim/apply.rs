//! What a task's output does: partitions it is told to stop or start (checked against who runs
//! them), fencing, and the records it publishes (a chunked publish may die half-way).

use crate::sync::{MessageType, SyncMessage, SyncOutput};

use super::{Check, Phase, Sim};

impl Sim {
    pub(super) fn apply(&mut self, i: usize, out: SyncOutput) -> Check {
        if !self.nodes[i].alive {
            return Ok(()); // it died half-way through a publish: nothing more of it happens
        }
        for t in &out.stop {
            self.nodes[i].running.remove(t);
        }
        if let Some(why) = &out.fenced {
            // the task stopped everything and falls silent: it leaves the group, and the
            // connector starts a replacement under a new id
            if !self.nodes[i].running.is_empty() {
                return Err(format!(
                    "{} fenced itself but still runs {:?}",
                    self.nodes[i].id, self.nodes[i].running
                ));
            }
            let n = &mut self.nodes[i];
            n.alive = false;
            n.events.clear();
            let l = format!("{} fenced: {why}", n.id);
            self.report.fenced += 1;
            self.note(l);
            let at = self.step + self.rng.range(1, 30) as usize;
            self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
            self.restart_capped(self.cap(256));
            return Ok(());
        }
        for t in &out.start {
            if self.finished.contains(t) {
                if self.cfg.strict_reruns {
                    return Err(format!(
                        "rerun: {} told to start {t}, which already finished",
                        self.nodes[i].id
                    ));
                }
                self.report.reruns += 1;
                let l = format!("{} reruns finished {t}", self.nodes[i].id);
                self.note(l);
            }
            // a task that read a record saying the partition is done never starts it again
            // (docs/sync.md, Guarantees: its finish landed before whatever moved it here)
            let n = &self.nodes[i];
            if let Some(&k) = self.finished_at.get(t) {
                if n.read_from <= k && k < n.cursor {
                    return Err(format!(
                        "rerun: {} told to start {t}, having read record #{k} that says it is done",
                        n.id
                    ));
                }
            }
            if let Some(&prev) = self.last_runner.get(t) {
                // (a task woken from a freeze after the group expelled it is no live member:
                // the time it runs a partition a member runs too is measured, see `check`)
                let woken = self.nodes[prev].expelled || self.nodes[i].expelled;
                if prev != i
                    && !woken
                    && self.nodes[prev].alive
                    && self.nodes[prev].running.contains_key(t)
                {
                    return Err(format!(
                        "safety: {} told to start {t} while {} runs it",
                        self.nodes[i].id, self.nodes[prev].id
                    ));
                }
            }
            self.last_runner.insert(t.clone(), i);
            self.nodes[i].running.insert(t.clone(), Phase::Scheduled);
        }
        let mut publish = out.publish;
        // (in a scale run, the first message in chunks published with faults on always dies
        // half-way, so that every scale run has one)
        let forced = self.scale() && self.report.chunk_deaths == 0;
        if self.chaos
            && self.calm.is_none()
            && publish.iter().any(|m| m.chunk.is_some())
            && (forced || self.rng.chance(self.cfg.faults.chunk_death))
        {
            // the task dies half-way through a chunked publish: the chunks before land
            let k = publish
                .iter()
                .position(|m| m.chunk.as_ref().is_some_and(|c| c.index + 1 < c.count))
                .unwrap_or(0);
            let keep = k + 1 + self.rng.below(publish.len().saturating_sub(k + 1) as u64) as usize;
            publish.truncate(keep.min(publish.len() - 1).max(1));
            let l = format!(
                "{} dies after publishing {} of its records",
                self.nodes[i].id,
                publish.len()
            );
            self.note(l);
            self.nodes[i].stop();
            self.report.crashes += 1;
            self.report.chunk_deaths += 1;
            let at = self.step + self.rng.range(1, 30) as usize;
            self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
        }
        for m in publish {
            let json = serde_json::to_string(&m).map_err(|e| format!("serialize: {e}"))?;
            if json.len() as u64 > self.cfg.options.max_record_bytes {
                return Err(format!(
                    "a record of {} bytes is larger than maxRecordBytes {}",
                    json.len(),
                    self.cfg.options.max_record_bytes
                ));
            }
            let back: SyncMessage =
                serde_json::from_str(&json).map_err(|e| format!("deserialize: {e}"))?;
            if back != m {
                return Err(format!("json round trip changed a message: {json}"));
            }
            self.report.max_message_bytes = self.report.max_message_bytes.max(json.len());
            self.report.bytes += json.len();
            self.report.chunk_records += usize::from(m.chunk.is_some());
            let scale = self.scale();
            if m.kind == MessageType::NewEpoch && self.tracing {
                let l = format!(
                    "{} publishes NewEpoch {} base {:?}{} {}",
                    m.task_id,
                    m.sync_epoch,
                    m.base_epoch,
                    match (m.resend, &m.checkpoint) {
                        (_, Some(c)) => {
                            // how many records landed after the one it names (0: clean)
                            let named = self.log.iter().rev().position(|r| {
                                r.task_id == c.after_task_id && r.message_seq == Some(c.after_seq)
                            });
                            format!(
                                " (checkpoint after {}#{}, {} later)",
                                c.after_task_id,
                                c.after_seq,
                                named.map_or("?".into(), |k| k.to_string())
                            )
                        }
                        (true, None) => " (resend)".to_string(),
                        _ => String::new(),
                    },
                    m.connector_state
                        .iter()
                        .map(|s| if scale {
                            format!("{}:{}", s.task_id, s.data.partitions.len())
                        } else {
                            format!(
                                "{}:{:?}",
                                s.task_id,
                                s.data
                                    .partitions
                                    .iter()
                                    .map(|p| p.token.as_str())
                                    .collect::<Vec<_>>()
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                self.note(l);
            }
            if let Some(at) = self.in_flight_until(i, &m) {
                self.in_flight.push((at, m));
                continue;
            }
            match self.divert {
                Some(due) => self.delayed.push((due, m)),
                None => {
                    let twice = self.chaos
                        && self.calm.is_none()
                        && self.rng.chance(self.cfg.faults.duplicate_record);
                    if twice {
                        self.note(format!("record #{} lands twice", self.log.len()));
                        self.append(m.clone());
                    }
                    self.append(m);
                }
            }
        }
        if self.tracing && (!out.start.is_empty() || !out.stop.is_empty()) {
            let l = format!(
                "{} start {:?} stop {:?}",
                self.nodes[i].id, out.start, out.stop
            );
            self.note(l);
        }
        Ok(())
    }

    /// When a record task `i` publishes now lands, for a producer with a backlog (or with
    /// records still in flight: it never overtakes them); `None`: as usual. In a burst run the
    /// chunks of a message land spread over the time a producer may take (chunk `k` of `n`,
    /// `k / n` of it after the publication), so that chunks of several tasks interleave.
    fn in_flight_until(&mut self, i: usize, m: &SyncMessage) -> Option<u64> {
        let now = self.now;
        let spread = match &m.chunk {
            Some(c) if self.cfg.burst > 0 && c.count > 1 => {
                self.max_lag() * u64::from(c.index) / u64::from(c.count)
            }
            _ => 0,
        };
        let n = &mut self.nodes[i];
        if n.lag == 0 && spread == 0 && !self.in_flight.iter().any(|(_, m)| m.task_id == n.id) {
            return None;
        }
        n.landing = n.landing.max(now + n.lag.max(spread));
        Some(n.landing)
    }
}
