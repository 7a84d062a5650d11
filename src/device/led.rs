//! A disk's bay: the locate and fault LEDs of its enclosure slot, as the
//! kernel's ses driver shows them (`/sys/class/enclosure/ENC/SLOT/locate`
//! and `fault`), lit to find the disk to act on and turned off again.
//!
//! It must not write anything but an existing `locate` or `fault` file of
//! a slot the disk's topology names, and must not decide which disk to
//! light (the run document says which, and how).

use std::io::Write;
use std::path::Path;

use super::topology::Topology;

/// Which LED of a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Led {
    /// "Here it is": a disk to look at.
    Locate,
    /// "This one failed": a disk to return.
    Fault,
}

impl Led {
    /// Its file in the slot's directory, and its name in words.
    pub fn file(self) -> &'static str {
        match self {
            Led::Locate => "locate",
            Led::Fault => "fault",
        }
    }

    /// The LED for a disk to act on by `action` (the run document's word):
    /// fault for one to return, locate for the rest.
    pub fn for_action(action: &str) -> Led {
        if action == "return" { Led::Fault } else { Led::Locate }
    }
}

/// Turns `led` of the disk's slot on or off; what was done, or why not,
/// in words (for the disk's line). Never creates a file.
pub fn set(t: &Topology, led: Led, on: bool) -> Result<String, String> {
    let (Some(slot), Some(dir)) = (&t.enclosure_slot, &t.enclosure_component) else {
        return Err(
            "no enclosure slot is known for it (the kernel's ses driver shows none): where the backplane uses SGPIO, `ledctl locate=DISK` may light it"
                .into(),
        );
    };
    let file = Path::new(dir).join(led.file());
    // Truncated (sysfs takes it; a plain file then holds the value alone),
    // never created, never through a link (the slot's own attribute file).
    use std::os::unix::fs::OpenOptionsExt;
    let wrote = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&file)
        .and_then(|mut f| f.write_all(if on { b"1" } else { b"0" }));
    let state = if on { "on" } else { "off" };
    match wrote {
        Ok(()) => Ok(format!("enclosure {slot}: {} LED {state}", led.file())),
        Err(e) => Err(format!("enclosure {slot}: its {} LED could not be set ({e})", led.file())),
    }
}

/// At a run's end (`--locate`): each disk to act on (its path and the
/// action's word, as the run document says them) lit, the fault LED of one
/// to return and the locate LED of the rest, a line each saying what was
/// lit or why not, and how to turn it off. `topology` finds a disk's by
/// its path.
pub fn light<'a, 'b>(
    to_act_on: impl Iterator<Item = (&'b str, &'b str)>,
    topology: &dyn Fn(&str) -> Option<&'a Topology>,
    who: &str,
) {
    let mut done: Vec<&str> = Vec::new();
    for (path, action) in to_act_on {
        if done.contains(&path) {
            continue;
        }
        done.push(path);
        let said = match topology(path) {
            Some(t) => set(t, Led::for_action(action), true),
            None => Err("its topology is not known".into()),
        };
        match said {
            Ok(words) => {
                tell!("{who}: {path}: {words} (`arrayburn locate --off {path}` turns it off)")
            }
            Err(why) => tell!("{who}: {path}: not lit: {why}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(dir: &Path) -> Topology {
        Topology {
            enclosure_slot: Some("0:0:12:0 slot 4".into()),
            enclosure_component: Some(dir.to_string_lossy().into_owned()),
            ..Topology::default()
        }
    }

    #[test]
    fn a_slots_led_is_written_and_nothing_is_created() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("locate"), "0\n").unwrap();
        let t = slot(d.path());
        assert_eq!(set(&t, Led::Locate, true).unwrap(), "enclosure 0:0:12:0 slot 4: locate LED on");
        assert_eq!(std::fs::read_to_string(d.path().join("locate")).unwrap(), "1");
        set(&t, Led::Locate, false).unwrap();
        assert_eq!(std::fs::read_to_string(d.path().join("locate")).unwrap(), "0");
        // A slot without a fault LED: said, and no file made.
        let e = set(&t, Led::Fault, true).unwrap_err();
        assert!(e.contains("fault LED could not be set"), "{e}");
        assert!(!d.path().join("fault").exists());
        // A link planted where the LED's file is: not written through.
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("fault")).unwrap();
        assert!(set(&t, Led::Fault, true).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        // No slot known: said, with the way out.
        let e = set(&Topology::default(), Led::Locate, true).unwrap_err();
        assert!(e.contains("ledctl"), "{e}");
    }

    #[test]
    fn a_disk_to_return_gets_its_fault_led_the_others_locate() {
        assert_eq!(Led::for_action("return"), Led::Fault);
        assert_eq!(Led::for_action("recheck"), Led::Locate);
        assert_eq!(Led::for_action("check_path"), Led::Locate);
    }
}
