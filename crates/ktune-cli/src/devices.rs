//! `ktune devices`: the GPUs and OpenCL devices this machine has, with the `[runner]` keys
//! that pick each one.

use anyhow::Result;
use ktune_runners::cuda::driver as cuda;
use ktune_runners::opencl;
use serde_json::json;

/// Arguments of `ktune devices`.
#[derive(clap::Args)]
pub struct DevicesArgs {
    /// Print a JSON object instead of a list.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &DevicesArgs) -> Result<()> {
    let cuda = cuda::devices().map_err(|e| e.to_string());
    let opencl = opencl::list_devices();
    if args.json {
        let cuda_json = match &cuda {
            Ok(list) => json!({"devices": list.iter().enumerate().map(|(i, d)| json!({
                "device": i,
                "name": d.name,
                "compute_capability": format!("{}.{}", d.compute_capability / 10, d.compute_capability % 10),
                "multiprocessors": d.multiprocessors,
            })).collect::<Vec<_>>()}),
            Err(e) => json!({"devices": [], "unavailable": e}),
        };
        let opencl_json = match &opencl {
            Ok(list) => json!({"devices": list.iter().map(|d| json!({
                "platform": d.platform.0,
                "platform_name": d.platform.1,
                "device": d.index,
                "name": d.name,
                "vendor": d.vendor,
                "version": d.version,
                "driver": d.driver,
                "max_work_group_size": d.max_work_group_size,
            })).collect::<Vec<_>>()}),
            Err(e) => json!({"devices": [], "unavailable": e}),
        };
        return outln!(
            "{}",
            serde_json::to_string_pretty(&json!({"cuda": cuda_json, "opencl": opencl_json}))?
        )
        .map_err(Into::into);
    }
    outln!("CUDA (kind = \"cuda\"):")?;
    match &cuda {
        Ok(list) if list.is_empty() => outln!("  none: the CUDA driver sees no GPU")?,
        Ok(list) => {
            for (i, d) in list.iter().enumerate() {
                outln!(
                    "  device = {i}: {} (compute capability {}.{}, {} multiprocessors)",
                    d.name,
                    d.compute_capability / 10,
                    d.compute_capability % 10,
                    d.multiprocessors
                )?;
            }
        }
        Err(e) => outln!("  none: {e}")?,
    }
    outln!("OpenCL (kind = \"opencl\"):")?;
    match &opencl {
        Ok(list) if list.is_empty() => outln!("  none: the OpenCL platforms have no device")?,
        Ok(list) => {
            for d in list {
                outln!(
                    "  platform = {}, device = {}: {} ({}; platform \"{}\", {}, driver {}, work-groups up to {})",
                    d.platform.0,
                    d.index,
                    d.name,
                    d.vendor,
                    d.platform.1,
                    d.version,
                    d.driver,
                    d.max_work_group_size
                )?;
            }
        }
        Err(e) => outln!("  none: {e}")?,
    }
    Ok(())
}
