//! Instance and want states: setting them, propagating a partition's outcome to the instances
//! waiting on it, and sensing a want's state from its partitions (with the lists kept in step).

use crate::lifecycle::types::{AppliedTransition, PartitionStatus, WantState};

use super::{BuildState, InstState, Ix, Touched, Upstream};

impl BuildState {
    /// Changes the state of a canonical instance, unregistering it from `waiting` when it
    /// leaves UpstreamBuilding.
    pub(super) fn set_instance_state(
        &mut self,
        i: Ix,
        state: InstState,
        ts: u64,
        out: &mut Vec<AppliedTransition>,
        touched: &mut Touched,
    ) {
        let inst = &mut self.instances[i as usize];
        let from = inst.state.status();
        let old = std::mem::replace(&mut inst.state, state);
        inst.updated_at = ts;
        let to = inst.state.status();
        let (uuid, r) = (inst.uuid, inst.ref_ix);
        if let InstState::UpstreamBuilding { missing } = old {
            for &m in missing.iter() {
                self.refs[m as usize].waiting.remove(&i);
            }
        }
        touched.refs.push(r);
        out.push(AppliedTransition::Partition {
            uuid,
            partition_ref: self.ref_name(r).to_string(),
            from: Some(from),
            to,
        });
    }

    /// Wakes the partitions waiting for the refs of `settled` instances (which just became
    /// Live, Failed or UpstreamFailed): all upstreams Live → UpForRetry; an upstream Failed or
    /// UpstreamFailed → UpstreamFailed, which in turn wakes its own waiters (down the chain).
    pub(super) fn propagate(
        &mut self,
        settled: Vec<Ix>,
        ts: u64,
        out: &mut Vec<AppliedTransition>,
        touched: &mut Touched,
    ) {
        let mut work = settled;
        while let Some(i) = work.pop() {
            let inst = &self.instances[i as usize];
            let r = inst.ref_ix;
            let failed = match inst.state.status() {
                PartitionStatus::Live => false,
                PartitionStatus::Failed | PartitionStatus::UpstreamFailed => true,
                _ => continue,
            };
            let waiters: Vec<Ix> = self.refs[r as usize].waiting.iter().copied().collect();
            for w in waiters {
                if failed {
                    self.set_instance_state(
                        w,
                        InstState::UpstreamFailed { upstream: r },
                        ts,
                        out,
                        touched,
                    );
                    work.push(w);
                } else if let InstState::UpstreamBuilding { missing } =
                    &self.instances[w as usize].state
                {
                    match self.upstream_outcome(missing) {
                        Upstream::AllLive => {
                            self.set_instance_state(w, InstState::UpForRetry, ts, out, touched);
                        }
                        // Cannot happen while the invariants hold (a failed upstream would
                        // already have failed this waiter); handled the same way regardless.
                        Upstream::Failed(upstream) => {
                            self.set_instance_state(
                                w,
                                InstState::UpstreamFailed { upstream },
                                ts,
                                out,
                                touched,
                            );
                            work.push(w);
                        }
                        Upstream::Waiting => {}
                    }
                }
            }
        }
    }

    pub(super) fn upstream_outcome(&self, missing: &[Ix]) -> Upstream {
        let mut all_live = true;
        for &m in missing {
            match self
                .canonical_ix(m)
                .map(|c| self.instances[c as usize].state.status())
            {
                Some(PartitionStatus::Failed | PartitionStatus::UpstreamFailed) => {
                    return Upstream::Failed(m)
                }
                Some(PartitionStatus::Live) => {}
                _ => all_live = false,
            }
        }
        if all_live {
            Upstream::AllLive
        } else {
            Upstream::Waiting
        }
    }

    /// Re-senses the active wants of touched refs (and reopens the Successful wants of
    /// tainted refs that are within their TTL at `ts`), each once, in creation order.
    pub(super) fn resense(&mut self, touched: Touched, ts: u64, out: &mut Vec<AppliedTransition>) {
        let mut wants: Vec<Ix> = Vec::new();
        for &r in &touched.refs {
            wants.extend(self.refs[r as usize].active_wants.iter().copied());
        }
        for &r in &touched.tainted_refs {
            let within_ttl = self.refs[r as usize]
                .successful_wants
                .range((ts.saturating_add(1), 0)..);
            wants.extend(within_ttl.map(|&(_, w)| w));
        }
        super::sort_ix(&mut wants);
        wants.dedup();
        for w in wants {
            let want = &self.wants[w as usize];
            if !(want.state.is_active() || want.state == WantState::Successful) {
                continue;
            }
            let sensed = self.sense(&want.refs);
            if sensed != want.state {
                self.set_want_state(w, sensed, ts, out);
            }
        }
    }

    /// The state a want's refs call for, in the priority order of DataBuild's
    /// partition-identity design: any canonical Failed →
    /// Failed; any UpstreamFailed → UpstreamFailed; all Live → Successful; any Building →
    /// Building; any UpstreamBuilding → UpstreamBuilding; otherwise (no instance yet,
    /// UpForRetry, Tainted) → Idle.
    pub(crate) fn sense(&self, refs: &[Ix]) -> WantState {
        let (mut failed, mut upstream_failed, mut building, mut upstream_building) =
            (false, false, false, false);
        let mut all_live = true;
        for &r in refs {
            let status = self
                .canonical_ix(r)
                .map(|c| self.instances[c as usize].state.status());
            if status != Some(PartitionStatus::Live) {
                all_live = false;
            }
            match status {
                Some(PartitionStatus::Failed) => failed = true,
                Some(PartitionStatus::UpstreamFailed) => upstream_failed = true,
                Some(PartitionStatus::Building) => building = true,
                Some(PartitionStatus::UpstreamBuilding) => upstream_building = true,
                _ => {}
            }
        }
        if failed {
            WantState::Failed
        } else if upstream_failed {
            WantState::UpstreamFailed
        } else if all_live {
            WantState::Successful
        } else if building {
            WantState::Building
        } else if upstream_building {
            WantState::UpstreamBuilding
        } else {
            WantState::Idle
        }
    }

    pub(super) fn set_want_state(
        &mut self,
        w: Ix,
        state: WantState,
        ts: u64,
        out: &mut Vec<AppliedTransition>,
    ) {
        self.unlist_want(w);
        let want = &mut self.wants[w as usize];
        let from = want.state;
        want.state = state;
        want.updated_at = ts;
        out.push(AppliedTransition::Want {
            want_id: want.id.to_string(),
            from: Some(from),
            to: state,
        });
        self.list_want(w);
    }

    /// Adds a want to the per-ref sets its state belongs to.
    pub(crate) fn list_want(&mut self, w: Ix) {
        let want = &self.wants[w as usize];
        let state = want.state;
        let expiry = want.ttl_end();
        if state == WantState::Idle {
            self.idle_wants.insert(w);
        }
        if let (true, Some(sla_end)) = (state.is_active(), want.sla_end()) {
            self.sla_open_wants.insert((sla_end, w));
        }
        for &r in want.refs.iter() {
            let entry = &mut self.refs[r as usize];
            if state.is_active() {
                entry.active_wants.insert(w);
            } else if state == WantState::Successful {
                entry.successful_wants.insert((expiry, w));
            }
        }
    }

    pub(super) fn unlist_want(&mut self, w: Ix) {
        let want = &self.wants[w as usize];
        let expiry = want.ttl_end();
        if let Some(sla_end) = want.sla_end() {
            self.sla_open_wants.remove(&(sla_end, w));
        }
        self.idle_wants.remove(&w);
        for &r in want.refs.iter() {
            let entry = &mut self.refs[r as usize];
            entry.active_wants.remove(&w);
            entry.successful_wants.remove(&(expiry, w));
        }
    }
}
