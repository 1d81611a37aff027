//! Observers through NVML (loaded at run time): clocks, temperature, power and energy.

use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::{Device, Nvml};
use serde_json::json;
use std::time::Instant;

use ktune_core::Observed;

/// NVML, bound to one device by its UUID.
pub struct PowerMeter {
    nvml: Nvml,
    uuid: String,
}

/// A power measurement while a kernel runs back to back.
#[derive(Clone, Debug, PartialEq)]
pub struct Power {
    /// Mean power in watts while the kernel ran.
    pub watts: f64,
    /// Energy per launch in joules: the power times the kernel's (event-timed) duration,
    /// as Kernel Tuner defines it.
    pub joules_per_launch: f64,
    /// Where the power came from: `"energy counter"` (NVML's total-energy counter between
    /// two of its updates) or `"power samples"` (the mean of NVML's power readings, on GPUs
    /// whose counter does not move).
    pub source: &'static str,
    /// NVML's power readings during the window, in watts (kept with the result so the
    /// figure can be checked against them).
    pub samples: Vec<f64>,
    /// The seconds the power was averaged over.
    pub seconds: f64,
}

impl PowerMeter {
    /// NVML for the device with this UUID; `Err` says why it is unavailable.
    pub fn open(uuid: &str) -> Result<PowerMeter, String> {
        let nvml = Nvml::init().map_err(|e| e.to_string())?;
        nvml.device_by_uuid(uuid)
            .map_err(|e| format!("NVML does not know device {uuid}: {e}"))?;
        Ok(PowerMeter {
            nvml,
            uuid: uuid.to_string(),
        })
    }

    /// The device, looked up by its UUID each time (NVML's handle borrows the library).
    fn device(&self) -> Option<Device<'_>> {
        self.nvml.device_by_uuid(self.uuid.as_str()).ok()
    }

    /// Clocks and temperature now, as observed values.
    pub fn snapshot(&self) -> Observed {
        let mut out = Observed::new();
        if let Some(d) = self.device() {
            if let Ok(v) = d.clock_info(Clock::SM) {
                out.insert("sm_clock_mhz".into(), json!(v));
            }
            if let Ok(v) = d.clock_info(Clock::Memory) {
                out.insert("memory_clock_mhz".into(), json!(v));
            }
            if let Ok(v) = d.temperature(TemperatureSensor::Gpu) {
                out.insert("temperature_c".into(), json!(v));
            }
        }
        out
    }

    /// The SM clock now, in MHz.
    pub fn sm_clock(&self) -> Option<u32> {
        self.device()?.clock_info(Clock::SM).ok()
    }

    /// Total energy since the driver loaded, in millijoules (Volta and newer).
    fn energy_mj(&self) -> Option<u64> {
        self.device()?.total_energy_consumption().ok()
    }

    /// Power now, in milliwatts.
    fn power_mw(&self) -> Option<u32> {
        self.device()?.power_usage().ok()
    }

    /// The power drawn while `batch` keeps the GPU busy (each call queues a few
    /// milliseconds of back-to-back launches and waits for them), averaged over at least
    /// `seconds`, and the energy of one launch of `kernel_ms` milliseconds.
    ///
    /// NVML's energy counter moves in steps (every 100 ms on an H100 with driver 580), so a
    /// difference over an arbitrary window is off by up to a step at each end (20% over
    /// 0.5 s). The window therefore runs from one update of the counter to a later one,
    /// and starts at the second update seen, because the period that ends at the first
    /// may have begun before the launches did.
    pub fn measure<E>(
        &self,
        kernel_ms: f64,
        seconds: f64,
        mut batch: impl FnMut() -> Result<(), E>,
    ) -> Result<Option<Power>, E> {
        let mut samples: Vec<f64> = Vec::new();
        let sample = |samples: &mut Vec<f64>| {
            if let Some(p) = self.power_mw() {
                samples.push(p as f64 / 1000.0);
            }
        };
        let started = Instant::now();
        // Without a moving counter, give up on it after this long and use the samples.
        let patience = 2.0 * seconds + 0.5;
        let mut last = self.energy_mj();
        let mut updates = 0usize;
        let mut from: Option<(Instant, u64)> = None;
        let mut power: Option<(f64, f64)> = None;
        while power.is_none() && started.elapsed().as_secs_f64() < patience {
            batch()?;
            sample(&mut samples);
            let now = self.energy_mj();
            if now == last || now.is_none() {
                continue;
            }
            last = now;
            updates += 1;
            let (Some(e), t) = (now, Instant::now()) else {
                continue;
            };
            match from {
                None if updates >= 2 => {
                    from = Some((t, e));
                    samples.clear();
                }
                Some((t0, e0)) if (t - t0).as_secs_f64() >= seconds && e > e0 => {
                    let s = (t - t0).as_secs_f64();
                    power = Some(((e - e0) as f64 / 1000.0 / s, s));
                }
                _ => {}
            }
        }
        let (watts, window, source) = match power {
            Some((w, s)) => (w, s, "energy counter"),
            None if !samples.is_empty() => {
                let w = samples.iter().sum::<f64>() / samples.len() as f64;
                (w, started.elapsed().as_secs_f64(), "power samples")
            }
            None => return Ok(None),
        };
        Ok(Some(Power {
            watts,
            joules_per_launch: watts * kernel_ms * 1e-3,
            source,
            samples,
            seconds: window,
        }))
    }
}
