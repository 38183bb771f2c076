//! The directory lock: held against other processes and against a second open in this
//! process, and not inherited by a forked child (which once kept a closed database locked
//! until the child exited). One test function: the file forks, and a forked child of a
//! process with several test threads could inherit a lock one of them held mid-call.

use shamba::{Db, Error, Options};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

fn opens(dir: &std::path::Path) -> Result<Db, Error> {
    Db::open(dir, Options::default())
}

/// Fork a child that runs only `child` (async-signal-safe calls, no allocation) and then
/// exits.
fn fork(child: impl FnOnce()) -> libc::pid_t {
    // SAFETY: the child calls only async-signal-safe functions (open, fcntl, write, sleep,
    // _exit) on values prepared before the fork, then exits without returning.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        child();
        // SAFETY: ends the child without running the parent's destructors or atexit hooks.
        unsafe { libc::_exit(0) };
    }
    pid
}

fn reap(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    unsafe { libc::waitpid(pid, &mut status, 0) };
}

#[test]
fn the_directory_lock_keeps_out_others_but_not_the_parent_of_a_fork() {
    let dir = tempfile::tempdir().unwrap();

    // A second open in this process is refused while the first is open, then succeeds.
    let db = opens(dir.path()).unwrap();
    assert!(matches!(opens(dir.path()), Err(Error::Locked(_))));
    // ... and the refused attempt did not release the holder's lock (closing any
    // descriptor of a record-locked file would).
    let lock_path = CString::new(dir.path().join("LOCK").as_os_str().as_bytes()).unwrap();
    let (read_end, write_end) = pipe();
    let probe = fork(|| {
        // SAFETY: a path prepared before the fork; a stack `flock`.
        unsafe {
            let fd = libc::open(lock_path.as_ptr(), libc::O_RDWR);
            let mut fl: libc::flock = std::mem::zeroed();
            fl.l_type = libc::F_WRLCK as libc::c_short;
            fl.l_whence = libc::SEEK_SET as libc::c_short;
            let got = libc::fcntl(fd, libc::F_SETLK, &fl) == 0;
            libc::write(write_end, [got as u8].as_ptr().cast(), 1);
        }
    });
    assert_eq!(read_byte(read_end), 0, "another process took the lock of an open database");
    reap(probe);

    // A child forked while the database is open does not keep it locked once the parent
    // closes it.
    let sleeper = fork(|| {
        // SAFETY: async-signal-safe.
        unsafe { libc::sleep(5) };
    });
    drop(db);
    let db = opens(dir.path()).expect("reopen while a forked child still lives");
    drop(db);
    // SAFETY: our child.
    unsafe { libc::kill(sleeper, libc::SIGKILL) };
    reap(sleeper);

    // Another process's lock keeps this one out until that process is gone.
    let (read_end, write_end) = pipe();
    let holder = fork(|| {
        // SAFETY: as above.
        unsafe {
            let fd = libc::open(lock_path.as_ptr(), libc::O_RDWR);
            let mut fl: libc::flock = std::mem::zeroed();
            fl.l_type = libc::F_WRLCK as libc::c_short;
            fl.l_whence = libc::SEEK_SET as libc::c_short;
            let got = libc::fcntl(fd, libc::F_SETLK, &fl) == 0;
            libc::write(write_end, [got as u8].as_ptr().cast(), 1);
            libc::sleep(30);
        }
    });
    assert_eq!(read_byte(read_end), 1, "the child could not take the lock of a closed database");
    assert!(matches!(opens(dir.path()), Err(Error::Locked(_))));
    // SAFETY: our child.
    unsafe { libc::kill(holder, libc::SIGKILL) };
    reap(holder);
    std::thread::sleep(Duration::from_millis(10));
    opens(dir.path()).expect("open after the holder died");
}

fn pipe() -> (libc::c_int, libc::c_int) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

fn read_byte(fd: libc::c_int) -> u8 {
    let mut b = [9u8; 1];
    // SAFETY: one byte into a one-byte buffer.
    let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) };
    assert_eq!(n, 1);
    b[0]
}
