//! The node series every telemetry source shares, derived from LDMS sampler columns.
//!
//! The rules, the windows and the models read series by name. The built-in Prometheus queries and
//! the simulator write one vocabulary (`cpu_user`, `mem_used_bytes`, ...); the LDMS CSV store
//! writes its samplers' own columns (`procstat.user_per_s`, `meminfo.MemAvailable`). Deriving the
//! shared names from the LDMS columns as well, with the meaning the Prometheus queries give them,
//! lets a model trained on one source judge another (the simulator's days and the real HPAS runs:
//! docs/models.md, "Simulated → real") and lets the CPU rules read LDMS jobs. The sampler's own
//! columns are still stored beside them.
//!
//! Meaning (as the queries in [`super::settings`]):
//! - `cpu_user`, `cpu_system`, `cpu_iowait`, `cpu_idle` (procstat): the share of the node's CPU
//!   time in that mode between two samples, of the time in every mode (user, nice, sys, idle,
//!   iowait, irq, softirq, steal; the kernel already counts guest time inside user);
//! - `cpu_core<N>_util` (procstat's `per_core_*<N>` columns): the share of core N's time neither
//!   idle nor waiting for I/O, as the simulator writes it;
//! - `mem_used_bytes` = MemTotal − MemAvailable and `mem_available_bytes` = MemAvailable
//!   (meminfo, kB);
//! - `disk_read_bytes_per_s`, `disk_write_bytes_per_s` (vmstat's pgpgin and pgpgout, which count
//!   kB read from and written to block devices);
//! - `procs_running_per_cpu` (procstat's `procs_running`: tasks running or waiting for a CPU) and
//!   `context_switches_per_cpu_per_s` (the rate of its `context_switches` counter), each divided
//!   by the node's CPUs (`cores_up`, else the per-core columns found) so that a 2-core node and a
//!   20-thread workstation are read on one scale. A neighbour that competes for the cores of a
//!   job already using all of them adds runnable tasks and switches and leaves the CPU shares
//!   as they were.
//!
//! Shares and rates need two samples of the node in time order; across a counter that went down
//! (a reset) a share means nothing, so that pair gives none.

use super::ldms_sample::Sample;

/// Names of the per-core utilisation series, as the simulator writes them.
pub fn core_series(core: u32) -> String {
    format!("cpu_core{core}_util")
}

/// Column positions of one CPU's (the node's or one core's) time counters.
#[derive(Debug, Clone, PartialEq)]
struct Modes {
    user: usize,
    sys: usize,
    iowait: usize,
    idle: usize,
    /// Every mode's column, the four above included: the total.
    all: Vec<usize>,
}

impl Modes {
    /// The columns `<prefix><mode><suffix>`; `None` unless user, sys, idle and iowait are there.
    fn find(columns: &[String], prefix: &str, suffix: &str) -> Option<Modes> {
        let at = |mode: &str| {
            let name = format!("{prefix}{mode}{suffix}");
            columns.iter().position(|c| *c == name)
        };
        // procstat names the per-core softirq column `per_core_softirqd<N>`.
        let softirq = at("softirq").or_else(|| at("softirqd"));
        Some(Modes {
            user: at("user")?,
            sys: at("sys")?,
            iowait: at("iowait")?,
            idle: at("idle")?,
            all: ["user", "nice", "sys", "idle", "iowait", "irq", "steal"]
                .iter()
                .filter_map(|m| at(m))
                .chain(softirq)
                .collect(),
        })
    }

    /// Each column's increase between two samples, or `None` across a reset.
    fn increase(previous: &Sample, current: &Sample, column: usize) -> Option<f64> {
        let d = current.values.get(column)? - previous.values.get(column)?;
        (d >= 0.0 && d.is_finite()).then_some(d)
    }

    /// The time in all modes between two samples and the increase of the given columns, or `None`
    /// across a reset or when no time passed.
    fn total(&self, previous: &Sample, current: &Sample) -> Option<f64> {
        let mut total = 0.0;
        for &c in &self.all {
            total += Self::increase(previous, current, c)?;
        }
        (total > 0.0).then_some(total)
    }
}

/// Column positions of procstat's task figures and the CPU count they are divided by.
#[derive(Debug, Clone, PartialEq)]
struct Tasks {
    running: Option<usize>,
    switches: Option<usize>,
    /// `cores_up`; without it the number of per-core column sets found is the CPU count.
    cores_up: Option<usize>,
    cores_found: usize,
}

impl Tasks {
    fn find(columns: &[String], cores_found: usize) -> Option<Tasks> {
        let at = |name: &str| columns.iter().position(|c| c == name);
        let tasks = Tasks {
            running: at("procs_running"),
            switches: at("context_switches"),
            cores_up: at("cores_up"),
            cores_found,
        };
        (tasks.running.is_some() || tasks.switches.is_some()).then_some(tasks)
    }

    /// The node's CPUs at `current`, or `None` when neither source gives a positive count.
    fn cpus(&self, current: &Sample) -> Option<f64> {
        let up = self
            .cores_up
            .and_then(|c| current.values.get(c).copied())
            .filter(|v| v.is_finite() && *v > 0.0);
        up.or((self.cores_found > 0).then_some(self.cores_found as f64))
    }

    fn derive<'a>(
        &self,
        previous: Option<&Sample>,
        current: &Sample,
        emit: &mut impl FnMut(&'a str, f64),
    ) {
        let Some(cpus) = self.cpus(current) else {
            return;
        };
        let running = self
            .running
            .and_then(|c| current.values.get(c).copied())
            .filter(|v| v.is_finite() && *v >= 0.0);
        if let Some(running) = running {
            emit("procs_running_per_cpu", running / cpus);
        }
        let (Some(previous), Some(c)) = (previous, self.switches) else {
            return;
        };
        let seconds = (current.ts_micros - previous.ts_micros) as f64 / 1e6;
        if seconds > 0.0
            && let Some(switches) = Modes::increase(previous, current, c)
        {
            emit("context_switches_per_cpu_per_s", switches / seconds / cpus);
        }
    }
}

/// How one sampler's columns give shared series, when they do.
#[derive(Debug, Clone, PartialEq)]
enum Derive {
    Cpu {
        node: Option<Modes>,
        cores: Vec<(String, Modes)>,
        tasks: Option<Tasks>,
    },
    Memory {
        total: usize,
        available: usize,
    },
    Disk {
        read: usize,
        written: usize,
    },
}

/// The shared series one LDMS sampler's columns give.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedSeries(Derive);

/// The largest core number looked for in `per_core_*` columns.
const MAX_CORES: u32 = 4096;

impl SharedSeries {
    /// What `sampler` with these metric columns gives, or `None` (another sampler, or the columns
    /// the series need are missing).
    pub fn of(sampler: &str, columns: &[String]) -> Option<SharedSeries> {
        let at = |name: &str| columns.iter().position(|c| c == name);
        let derive = match sampler {
            "procstat" => {
                let node = Modes::find(columns, "", "");
                let mut cores = Vec::new();
                for core in 0..MAX_CORES {
                    match Modes::find(columns, "per_core_", &core.to_string()) {
                        Some(modes) => cores.push((core_series(core), modes)),
                        None => break,
                    }
                }
                let tasks = Tasks::find(columns, cores.len());
                if node.is_none() && cores.is_empty() && tasks.is_none() {
                    return None;
                }
                Derive::Cpu { node, cores, tasks }
            }
            "meminfo" => Derive::Memory {
                total: at("MemTotal")?,
                available: at("MemAvailable")?,
            },
            "vmstat" => Derive::Disk {
                read: at("pgpgin")?,
                written: at("pgpgout")?,
            },
            _ => return None,
        };
        Some(SharedSeries(derive))
    }

    /// The shared series' values at `current`, given the node's previous sample (`None` for
    /// its first), handed to `emit(name, value)`.
    pub fn derive<'a>(
        &'a self,
        previous: Option<&Sample>,
        current: &Sample,
        mut emit: impl FnMut(&'a str, f64),
    ) {
        let value = |c: usize| current.values.get(c).copied().filter(|v| v.is_finite());
        match &self.0 {
            Derive::Memory { total, available } => {
                if let (Some(total), Some(available)) = (value(*total), value(*available)) {
                    emit("mem_used_bytes", (total - available).max(0.0) * 1024.0);
                    emit("mem_available_bytes", available * 1024.0);
                }
            }
            Derive::Disk { read, written } => {
                let Some(previous) = previous else { return };
                let seconds = (current.ts_micros - previous.ts_micros) as f64 / 1e6;
                if seconds <= 0.0 {
                    return;
                }
                for (name, c) in [
                    ("disk_read_bytes_per_s", *read),
                    ("disk_write_bytes_per_s", *written),
                ] {
                    if let Some(kb) = Modes::increase(previous, current, c) {
                        emit(name, kb * 1024.0 / seconds);
                    }
                }
            }
            Derive::Cpu { node, cores, tasks } => {
                if let Some(tasks) = tasks {
                    tasks.derive(previous, current, &mut emit);
                }
                let Some(previous) = previous else { return };
                if current.ts_micros <= previous.ts_micros {
                    return;
                }
                let share = |modes: &Modes, c: usize| {
                    let total = modes.total(previous, current)?;
                    Some(Modes::increase(previous, current, c)? / total)
                };
                if let Some(modes) = node {
                    for (name, c) in [
                        ("cpu_user", modes.user),
                        ("cpu_system", modes.sys),
                        ("cpu_iowait", modes.iowait),
                        ("cpu_idle", modes.idle),
                    ] {
                        if let Some(s) = share(modes, c) {
                            emit(name, s);
                        }
                    }
                }
                for (name, modes) in cores {
                    if let (Some(idle), Some(iowait)) =
                        (share(modes, modes.idle), share(modes, modes.iowait))
                    {
                        emit(name, (1.0 - idle - iowait).clamp(0.0, 1.0));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ts_s: i64, values: &[f64]) -> Sample {
        Sample {
            ts_micros: ts_s * 1_000_000,
            node: "n1".into(),
            values: values.to_vec(),
        }
    }

    fn names(text: &str) -> Vec<String> {
        text.split(',').map(str::to_string).collect()
    }

    fn derived(
        s: &SharedSeries,
        previous: Option<&Sample>,
        current: &Sample,
    ) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        s.derive(previous, current, |n, v| out.push((n.to_string(), v)));
        out
    }

    #[test]
    fn cpu_shares_of_the_node_and_each_core() {
        let columns = names(
            "cores_up,user,nice,sys,idle,iowait,irq,softirq,steal,guest,\
             per_core_user0,per_core_sys0,per_core_idle0,per_core_iowait0,per_core_softirqd0,\
             per_core_user1,per_core_sys1,per_core_idle1,per_core_iowait1",
        );
        let s = SharedSeries::of("procstat", &columns).unwrap();
        let a = sample(
            10,
            &[
                2., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0.,
            ],
        );
        // 200 jiffies in all: 100 user, 10 nice, 30 sys, 50 idle, 10 iowait; guest (inside
        // user) not counted twice. Core 0 busy 80 of 100, core 1 idle 90 and iowait 10 of 100.
        let b = sample(
            11,
            &[
                2., 100., 10., 30., 50., 10., 0., 0., 0., 40., 70., 10., 15., 5., 0., 0., 0., 90.,
                10.,
            ],
        );
        assert!(derived(&s, None, &b).is_empty(), "no share from one sample");
        let got = derived(&s, Some(&a), &b);
        let want = [
            ("cpu_user", 0.5),
            ("cpu_system", 0.15),
            ("cpu_iowait", 0.05),
            ("cpu_idle", 0.25),
            ("cpu_core0_util", 0.8),
            ("cpu_core1_util", 0.0),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((name, value), (wn, wv)) in got.iter().zip(want) {
            assert_eq!(name, wn);
            assert!((value - wv).abs() < 1e-12, "{name}: {value} != {wv}");
        }
        // A counter that went down (a reset): no share for that pair.
        let mut reset = b.clone();
        reset.ts_micros += 1_000_000;
        reset.values[1] = 5.0;
        reset.values[10] += 10.0;
        assert_eq!(
            derived(&s, Some(&b), &reset),
            vec![("cpu_core0_util".to_string(), 1.0)],
            "the node's shares stop at the reset; core 1 had no time pass"
        );
    }

    #[test]
    fn runnable_tasks_and_switches_per_cpu() {
        let columns = names("cores_up,user,sys,idle,iowait,context_switches,procs_running");
        let s = SharedSeries::of("procstat", &columns).unwrap();
        let a = sample(10, &[20., 0., 0., 0., 0., 1000., 21.]);
        let b = sample(12, &[20., 30., 0., 10., 0., 2200., 22.]);
        assert_eq!(
            derived(&s, None, &a),
            vec![("procs_running_per_cpu".to_string(), 21.0 / 20.0)],
            "a gauge needs one sample, a rate two"
        );
        let got = derived(&s, Some(&a), &b);
        assert!(got.contains(&("procs_running_per_cpu".to_string(), 22.0 / 20.0)));
        assert!(
            got.contains(&(
                "context_switches_per_cpu_per_s".to_string(),
                1200.0 / 2.0 / 20.0
            )),
            "{got:?}"
        );
        // Without cores_up the per-core column sets found are the CPUs; with neither, nothing.
        let cores = SharedSeries::of(
            "procstat",
            &names("procs_running,per_core_user0,per_core_sys0,per_core_idle0,per_core_iowait0"),
        )
        .unwrap();
        assert_eq!(
            derived(&cores, None, &sample(1, &[3., 0., 0., 0., 0.])),
            vec![("procs_running_per_cpu".to_string(), 3.0)]
        );
        let bare = SharedSeries::of("procstat", &names("procs_running")).unwrap();
        assert!(derived(&bare, None, &sample(1, &[3.])).is_empty());
    }

    #[test]
    fn memory_and_disk_bytes() {
        let mem = SharedSeries::of("meminfo", &names("MemTotal,MemFree,MemAvailable")).unwrap();
        let m = sample(1, &[1000., 100., 400.]);
        assert_eq!(
            derived(&mem, None, &m),
            vec![
                ("mem_used_bytes".to_string(), 600.0 * 1024.0),
                ("mem_available_bytes".to_string(), 400.0 * 1024.0)
            ]
        );
        let disk = SharedSeries::of("vmstat", &names("nr_free_pages,pgpgin,pgpgout")).unwrap();
        let (a, b) = (sample(10, &[0., 100., 50.]), sample(12, &[0., 300., 50.]));
        assert_eq!(
            derived(&disk, Some(&a), &b),
            vec![
                ("disk_read_bytes_per_s".to_string(), 100.0 * 1024.0),
                ("disk_write_bytes_per_s".to_string(), 0.0)
            ]
        );
        assert!(derived(&disk, Some(&b), &a).is_empty(), "time went back");
    }

    #[test]
    fn other_samplers_and_missing_columns_give_nothing() {
        assert_eq!(SharedSeries::of("lustre", &names("open,close")), None);
        assert_eq!(
            SharedSeries::of("meminfo", &names("MemTotal,MemFree")),
            None
        );
        assert_eq!(SharedSeries::of("procstat", &names("user,sys,idle")), None);
    }
}
