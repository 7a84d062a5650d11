//! `arrayburn list` on real loop devices.

use crate::util::*;

#[test]
fn list_shows_a_named_4k_disk_with_its_geometry() {
    need_root!();
    let _l = device_lock();
    let d = loop_disk(&Spec { sector: 4096, ..Spec::shm(16 << 20) });
    let out = arrayburn(&["list", "--json", "-", &d.dev]).output_within(RUN);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["name"], d.name());
    assert_eq!(v[0]["size_bytes"], 16 << 20);
    assert_eq!(v[0]["logical_block_size"], 4096);
    assert_eq!(v[0]["in_use"].as_array().unwrap().len(), 0);
}

#[test]
fn list_all_includes_loop_devices_and_plain_list_does_not() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 8 << 20);
    let all = arrayburn(&["list", "--all"]).output_within(RUN);
    let text = String::from_utf8_lossy(&all.stdout);
    assert!(text.lines().next().unwrap().starts_with("Disk"), "{text}");
    assert!(text.contains(&d[0].dev), "{text}");
    let plain = arrayburn(&["list"]).output_within(RUN);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains(&d[0].dev));
}

#[test]
fn list_says_where_each_disk_hangs() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 8 << 20);
    let out = arrayburn(&["list", "--all", "--json", "-"]).output_within(RUN);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let disks = v.as_array().unwrap();
    // A loop device is virtual: no controller behind it.
    let lo = disks.iter().find(|x| x["path"] == d[0].dev.as_str()).unwrap();
    assert_eq!(lo["topology"]["transport"], "virtual", "{lo}");
    assert!(lo["topology"]["controller"].is_null(), "{lo}");
    assert_eq!(lo["topology"]["links"], serde_json::json!([]), "no link applies");
    // The machine's own disks (this VM: virtio) sit behind a PCI
    // function with a driver.
    let real: Vec<&serde_json::Value> = disks
        .iter()
        .filter(|x| !x["name"].as_str().unwrap().starts_with("loop"))
        .filter(|x| !x["name"].as_str().unwrap().starts_with("zram"))
        .collect();
    assert!(!real.is_empty(), "{v}");
    for x in real {
        let t = &x["topology"];
        assert_ne!(t["transport"], "unknown", "{x}");
        assert_ne!(t["transport"], "virtual", "{x}");
        let pci = t["controller"]["pci"].as_str().unwrap();
        assert_eq!(pci.len(), 12, "{x}");
        assert!(t["controller"]["driver"].is_string(), "{x}");
        // A virtio disk on this VM's PCI bus: no link to be degraded.
        assert!(t["links"].as_array().unwrap().iter().all(|l| l["degraded"] == false), "{x}");
    }
    let text = String::from_utf8_lossy(&arrayburn(&["list", "--all"]).output_within(RUN).stdout)
        .into_owned();
    assert!(text.lines().next().unwrap().contains("Transport  Controller"), "{text}");
}
