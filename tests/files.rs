//! The files the project installs beside the binary: udev rules.

#[test]
fn udev_rules_are_well_formed() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/udev/60-chessboardd.rules");
    let text = std::fs::read_to_string(path).unwrap();
    let mut rules = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        rules += 1;
        for part in line.split(", ") {
            let (key, value) = part
                .split_once("==")
                .or_else(|| part.split_once("+="))
                .or_else(|| part.split_once('='))
                .unwrap_or_else(|| panic!("line {}: '{part}' is not KEY==\"value\"", i + 1));
            assert!(
                key.chars()
                    .all(|c| c.is_ascii_uppercase() || "{}_".contains(c) || c.is_ascii_lowercase()),
                "line {}: key '{key}'",
                i + 1
            );
            assert!(
                value.starts_with('"') && value.ends_with('"') && value.len() >= 2,
                "line {}: value {value}",
                i + 1
            );
        }
    }
    assert_eq!(rules, 2);
    assert!(text
        .contains("ATTRS{idVendor}==\"04d8\", ATTRS{idProduct}==\"000a\", SYMLINK+=\"dgt-board\""));
    // No rule names a device by a chip that many other devices have (an Arduino's CH340, a
    // Raspberry Pi Pico): a 3D printer must not become /dev/chessboard.
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        for generic in ["\"1a86\"", "\"2e8a\"", "\"0403\"", "\"10c4\""] {
            assert!(
                !line.contains(generic) || line.contains("ATTRS{serial}"),
                "a rule on a generic USB serial chip alone: {line}"
            );
        }
    }
    // Where udevadm can check rule files (systemd 254 and later), it must accept them.
    if let Ok(o) = std::process::Command::new("udevadm")
        .args(["verify", path])
        .output()
    {
        let err = String::from_utf8_lossy(&o.stderr);
        if !err.contains("Unknown command")
            && !err.contains("unknown command")
            && !err.contains("invalid option")
        {
            assert!(o.status.success(), "udevadm verify: {err}");
        }
    }
}
