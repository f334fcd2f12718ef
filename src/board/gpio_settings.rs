//! The settings of a reed-switch board on GPIO lines (`[gpio]` of the config): the chip, the
//! wiring and its lines, the scan rate and how the squares are mapped.

use super::gpio::Mapping;

/// A reed-switch board on GPIO lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpioConfig {
    pub chip: String,
    /// `matrix`, `shift-register` or `direct`, with its lines (numbers or names).
    pub wiring: GpioWiring,
    pub rate_hz: u32,
    pub mapping: Mapping,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpioWiring {
    Matrix {
        rows: Vec<String>,
        cols: Vec<String>,
    },
    ShiftRegister {
        load: String,
        clock: String,
        data: String,
    },
    Direct {
        lines: Vec<String>,
    },
}

/// The default matrix lines (BCM). They leave free what a talking board may need for its sound
/// or its other parts: I2C (2, 3: expanders, a clock), PWM audio (12, 13: a Pi Zero's sound),
/// I2S (18 to 21: an audio HAT), the serial console (14, 15) and the HAT EEPROM (0, 1). Sixteen
/// lines cannot also avoid SPI0 (7 to 11), which only an SPI display needs.
pub const DEFAULT_ROWS: [u32; 8] = [4, 5, 6, 16, 17, 22, 23, 24];
pub const DEFAULT_COLS: [u32; 8] = [25, 26, 27, 7, 8, 9, 10, 11];

impl Default for GpioConfig {
    fn default() -> GpioConfig {
        GpioConfig {
            chip: "/dev/gpiochip0".into(),
            wiring: GpioWiring::Matrix {
                rows: DEFAULT_ROWS.map(|l| l.to_string()).to_vec(),
                cols: DEFAULT_COLS.map(|l| l.to_string()).to_vec(),
            },
            rate_hz: 100,
            mapping: Mapping {
                detect_side: true,
                ..Mapping::default()
            },
        }
    }
}

#[cfg(test)]
mod default_pins {
    use super::*;

    #[test]
    fn default_gpio_lines_leave_sound_i2c_and_the_console_free() {
        let all: Vec<u32> = DEFAULT_ROWS.iter().chain(&DEFAULT_COLS).copied().collect();
        let mut distinct = all.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 16, "sixteen different lines: {all:?}");
        for busy in [0, 1, 2, 3, 12, 13, 14, 15, 18, 19, 20, 21] {
            assert!(
                !all.contains(&busy),
                "BCM {busy} is taken by default: {all:?}"
            );
        }
        assert!(
            all.iter().all(|l| (2..=27).contains(l)),
            "on the 40-pin header"
        );
        // The reference config says the same as the defaults.
        let reference = include_str!("../../config/chessboardd.toml");
        let list = |a: &[u32; 8]| a.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        assert!(reference.contains(&format!("rows = [{}]", list(&DEFAULT_ROWS))));
        assert!(reference.contains(&format!("cols = [{}]", list(&DEFAULT_COLS))));
    }
}
