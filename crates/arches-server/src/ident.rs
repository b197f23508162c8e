//! Who is calling: peer credentials of the Unix socket (SO_PEERCRED, taken by
//! the HTTP layer for every connection) turned into user and group names with
//! the reentrant passwd/group lookups, and the host name.

use std::ffi::{CStr, CString};

/// A caller as identified by the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub uid: u32,
    pub gid: u32,
}

/// A passwd entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: String,
    pub shell: String,
}

/// Looks a user up by uid (`None`: no passwd entry).
pub fn user_by_uid(uid: u32) -> Option<UserInfo> {
    let mut buf = vec![0u8; 16384];
    // SAFETY: zeroed passwd is a valid out-parameter for getpwuid_r.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives the use of pw.
    let rc =
        unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return None;
    }
    // SAFETY: on success the strings point into buf, NUL-terminated.
    unsafe { Some(passwd_to_info(&pw)) }
}

/// Looks a user up by name.
pub fn user_by_name(name: &str) -> Option<UserInfo> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0u8; 16384];
    // SAFETY: as in user_by_uid.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pw,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut out,
        )
    };
    if rc != 0 || out.is_null() {
        return None;
    }
    // SAFETY: as in user_by_uid.
    unsafe { Some(passwd_to_info(&pw)) }
}

/// The name of a group (its number when it has no entry).
pub fn group_name(gid: u32) -> String {
    let mut buf = vec![0u8; 16384];
    // SAFETY: zeroed group is a valid out-parameter for getgrgid_r.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call.
    let rc =
        unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr().cast(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return gid.to_string();
    }
    // SAFETY: gr_name points into buf, NUL-terminated.
    unsafe { cstr(gr.gr_name) }
}

/// The gid of a group name (`None`: no group entry).
pub fn gid_by_name(name: &str) -> Option<u32> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0u8; 16384];
    // SAFETY: zeroed group is a valid out-parameter for getgrnam_r.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call.
    let rc = unsafe {
        libc::getgrnam_r(
            cname.as_ptr(),
            &mut gr,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut out,
        )
    };
    if rc != 0 || out.is_null() {
        return None;
    }
    Some(gr.gr_gid)
}

/// Supplementary groups of a user (its primary group included).
pub fn groups_of(user: &UserInfo) -> Vec<u32> {
    let Ok(cname) = CString::new(user.name.as_str()) else {
        return vec![user.gid];
    };
    let mut n: libc::c_int = 64;
    loop {
        let mut groups = vec![0 as libc::gid_t; n as usize];
        let before = n;
        // SAFETY: groups has room for n entries; n is updated by the call.
        let rc =
            unsafe { libc::getgrouplist(cname.as_ptr(), user.gid, groups.as_mut_ptr(), &mut n) };
        if rc >= 0 {
            groups.truncate(n.max(0) as usize);
            // Kept in every job's execution record: no spare capacity
            // (64 slots for one group was 256 bytes per submitted job).
            groups.shrink_to_fit();
            return groups;
        }
        if n <= before {
            n = before * 2;
        }
        if n > 65536 {
            return vec![user.gid];
        }
    }
}

/// The uid of this process.
pub fn current_uid() -> u32 {
    // SAFETY: getuid(2) has no preconditions.
    unsafe { libc::getuid() }
}

/// The short host name (up to the first dot).
pub fn short_hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf is valid for buf.len() bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    let full = String::from_utf8_lossy(&buf[..end]).into_owned();
    let short = full.split('.').next().unwrap_or("").to_string();
    if short.is_empty() {
        "localhost".to_string()
    } else {
        short
    }
}

unsafe fn passwd_to_info(pw: &libc::passwd) -> UserInfo {
    // SAFETY: the caller guarantees the strings are valid C strings.
    unsafe {
        UserInfo {
            name: cstr(pw.pw_name),
            uid: pw.pw_uid,
            gid: pw.pw_gid,
            home: cstr(pw.pw_dir),
            shell: cstr(pw.pw_shell),
        }
    }
}

unsafe fn cstr(p: *const libc::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller guarantees p is a valid C string.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_resolves_and_round_trips() {
        let root = user_by_uid(0).expect("root has a passwd entry");
        assert_eq!(root.name, "root");
        assert_eq!(user_by_name("root").map(|u| u.uid), Some(0));
        let groups = groups_of(&root);
        assert!(groups.contains(&root.gid));
        assert_eq!(groups.capacity(), groups.len(), "no spare capacity kept");
        assert_eq!(group_name(0), "root");
        assert!(!short_hostname().contains('.'));
    }

    #[test]
    fn unknown_ids_are_none() {
        assert!(user_by_uid(3_999_999_999).is_none());
        assert!(user_by_name("no-such-user-arches").is_none());
        assert_eq!(group_name(3_999_999_999), "3999999999");
    }
}
