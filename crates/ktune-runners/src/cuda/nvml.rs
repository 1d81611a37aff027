//! Observers through NVML (loaded at run time): clocks, temperature, power and energy.

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use serde_json::json;

use ktune_core::Observed;

/// NVML, bound to one device by its UUID.
pub struct PowerMeter {
    nvml: Nvml,
    uuid: String,
}

/// A power measurement over many launches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Power {
    /// Mean power in watts.
    pub watts: f64,
    /// Energy per launch in joules.
    pub joules_per_launch: f64,
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

    /// Clocks and temperature now, as observed values.
    pub fn snapshot(&self) -> Observed {
        let mut out = Observed::new();
        if let Ok(d) = self.nvml.device_by_uuid(self.uuid.as_str()) {
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

    /// Total energy since the driver loaded, in millijoules (Volta and newer).
    fn energy_mj(&self) -> Option<u64> {
        self.nvml
            .device_by_uuid(self.uuid.as_str())
            .ok()?
            .total_energy_consumption()
            .ok()
    }

    /// Power now, in milliwatts.
    fn power_mw(&self) -> Option<u32> {
        self.nvml
            .device_by_uuid(self.uuid.as_str())
            .ok()?
            .power_usage()
            .ok()
    }

    /// Measures while `work` runs `launches` launches (it returns how many ran and the wall
    /// seconds they took, and calls the sampler it is given every launch). Energy comes
    /// from the energy counter where the GPU has one, else from sampled power.
    pub fn measure<E>(
        &self,
        work: impl FnOnce(&mut dyn FnMut()) -> Result<(usize, f64), E>,
    ) -> Result<Option<Power>, E> {
        let e0 = self.energy_mj();
        let mut samples: Vec<f64> = Vec::new();
        let mut sampler = || {
            if let Some(p) = self.power_mw() {
                samples.push(p as f64 / 1000.0);
            }
        };
        let (launches, seconds) = work(&mut sampler)?;
        let e1 = self.energy_mj();
        if launches == 0 || seconds <= 0.0 {
            return Ok(None);
        }
        Ok(match (e0, e1) {
            (Some(a), Some(b)) if b > a => {
                let joules = (b - a) as f64 / 1000.0;
                Some(Power {
                    watts: joules / seconds,
                    joules_per_launch: joules / launches as f64,
                })
            }
            _ if !samples.is_empty() => {
                let watts = samples.iter().sum::<f64>() / samples.len() as f64;
                Some(Power {
                    watts,
                    joules_per_launch: watts * seconds / launches as f64,
                })
            }
            _ => None,
        })
    }
}
