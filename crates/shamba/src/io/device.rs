//! Device-latency emulation: a fixed cost added to every block read from storage.
//!
//! Lets the seeds' device sweeps (NVM, PCIe SSD, SATA SSD) run on any machine: the page
//! cache serves the bytes, and the model adds the latency the emulated device would have.

use std::time::{Duration, Instant};

/// The emulated cost of one block read.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum DeviceModel {
    /// No added cost: whatever the real storage costs.
    #[default]
    None,
    /// A fixed cost per read in nanoseconds.
    PerRead {
        /// Nanoseconds added to each read.
        nanos: u64,
    },
}

impl DeviceModel {
    /// Persistent memory: about 70 ns per read (seed 000).
    pub const NVM: DeviceModel = DeviceModel::PerRead { nanos: 70 };
    /// A PCIe (NVMe) SSD: about 10 us per read.
    pub const PCIE_SSD: DeviceModel = DeviceModel::PerRead { nanos: 10_000 };
    /// A SATA SSD: about 100 us per read.
    pub const SSD: DeviceModel = DeviceModel::PerRead { nanos: 100_000 };

    /// Parse `none`, `nvm`, `pcie`, `ssd` or a number of nanoseconds (`"2500"`, `"2500ns"`,
    /// `"10us"`).
    pub fn parse(s: &str) -> Option<DeviceModel> {
        let s = s.trim().to_ascii_lowercase();
        Some(match s.as_str() {
            "none" | "0" => DeviceModel::None,
            "nvm" => DeviceModel::NVM,
            "pcie" | "pcie-ssd" | "nvme" => DeviceModel::PCIE_SSD,
            "ssd" | "sata" => DeviceModel::SSD,
            _ => {
                let (num, mult) = if let Some(n) = s.strip_suffix("us") {
                    (n, 1_000)
                } else if let Some(n) = s.strip_suffix("ms") {
                    (n, 1_000_000)
                } else if let Some(n) = s.strip_suffix("ns") {
                    (n, 1)
                } else {
                    (s.as_str(), 1)
                };
                DeviceModel::PerRead {
                    nanos: num.trim().parse::<u64>().ok()?.checked_mul(mult)?,
                }
            }
        })
    }

    /// Nanoseconds added per read.
    pub fn nanos(&self) -> u64 {
        match self {
            DeviceModel::None => 0,
            DeviceModel::PerRead { nanos } => *nanos,
        }
    }

    /// Pay the emulated cost of one read. Busy-waits for sub-50us costs (sleep is far too
    /// coarse for them), sleeps for longer ones.
    #[inline]
    pub fn charge(&self) {
        let nanos = self.nanos();
        if nanos == 0 {
            return;
        }
        let start = Instant::now();
        let target = Duration::from_nanos(nanos);
        if nanos >= 50_000 {
            std::thread::sleep(target);
            return;
        }
        while start.elapsed() < target {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_named_and_numeric_devices() {
        assert_eq!(DeviceModel::parse("nvm"), Some(DeviceModel::NVM));
        assert_eq!(
            DeviceModel::parse("10us"),
            Some(DeviceModel::PerRead { nanos: 10_000 })
        );
        assert_eq!(
            DeviceModel::parse("250"),
            Some(DeviceModel::PerRead { nanos: 250 })
        );
        assert_eq!(DeviceModel::parse("fast"), None);
        assert_eq!(DeviceModel::parse("none"), Some(DeviceModel::None));
    }
}
