//! The system message file, OSO001.MSG, as this system provides it: the
//! `SYS` messages DosGetMessage returns when a program asks OSO001.MSG
//! for a message and no such file is along DPATH, and the texts
//! DosGetMessage puts in the caller's buffer when it fails (the message
//! file cannot be read, has no such message, or is no message file), as
//! OS/2 documents it does.
//!
//! The texts are this project's own wording, not IBM's: they say what
//! the error code means, in the same classes (E error, W warning, I
//! information) and with the same insertions. A program that needs IBM's
//! exact texts can put its own OSO001.MSG along DPATH: a file found there
//! is read first. The failure texts are always these (the kernel needs
//! them when no message file can be read).

/// (number, class, text) of the system messages known. `%1`, `%2` are
/// insertions; a text ends with CR LF as MKMSGF stores it.
const MESSAGES: &[(u32, u8, &str)] = &[
    (1, b'E', "The function number is not valid.\r\n"),
    (2, b'E', "No file of that name was found.\r\n"),
    (3, b'E', "No path of that name was found.\r\n"),
    (4, b'E', "No more files can be open.\r\n"),
    (5, b'E', "Access was denied.\r\n"),
    (6, b'E', "The handle is not valid.\r\n"),
    (8, b'E', "There is not enough memory.\r\n"),
    (15, b'E', "The drive is not valid.\r\n"),
    (26, b'E', "The disk is not a formatted OS/2 disk.\r\n"),
    (32, b'E', "Another process is using the file.\r\n"),
    (80, b'E', "The file already exists.\r\n"),
    (87, b'E', "A parameter is not valid.\r\n"),
    (99, b'E', "The device is in use.\r\n"),
    (112, b'E', "The disk is full.\r\n"),
    (123, b'E', "The name is not valid.\r\n"),
    (206, b'E', "The file name is too long.\r\n"),
    (
        316,
        b'E',
        "Message %1 of message file %2 is longer than the buffer given.\r\n",
    ),
    (317, b'E', "Message %1 is not in message file %2.\r\n"),
    (318, b'E', "Message file %2 cannot be found or read.\r\n"),
    (319, b'E', "File %2 is not a message file.\r\n"),
    (
        320,
        b'E',
        "More insertion texts were given for message %1 than the nine allowed.\r\n",
    ),
    (
        321,
        b'E',
        "Message %1 of message file %2 cannot be retrieved.\r\n",
    ),
];

/// Is `name` (as a program gives it) the system message file?
pub(crate) fn is_system_file(name: &[u8]) -> bool {
    tdf::module::file_name_bytes(name).eq_ignore_ascii_case(b"OSO001.MSG")
}

/// System message `number`: its class and text.
pub(crate) fn message(number: u32) -> Option<(u8, &'static [u8])> {
    MESSAGES
        .iter()
        .find(|m| m.0 == number)
        .map(|m| (m.1, m.2.as_bytes()))
}

/// The text DosGetMessage puts in the buffer when it fails with `rc`
/// for message `number` of `file`: `SYSnnnn: ` and the message with the
/// number (four digits) as `%1` and the file name as `%2`. `None` for a
/// code that has no text.
pub(crate) fn failure_text(rc: u32, number: u32, file: &[u8]) -> Option<Vec<u8>> {
    let (_, text) = message(rc).filter(|_| (316..=321).contains(&rc))?;
    let mut full = format!("SYS{rc:04}: ").into_bytes();
    full.extend_from_slice(text);
    let inserts = [format!("{number:04}").into_bytes(), file.to_vec()];
    super::msg::expand(&full, &inserts, usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_texts_name_the_message_and_file() {
        assert_eq!(
            failure_text(318, 5, b"T.MSG").unwrap(),
            b"SYS0318: Message file T.MSG cannot be found or read.\r\n"
        );
        assert_eq!(
            failure_text(317, 42, b"C:\\X.MSG").unwrap(),
            b"SYS0317: Message 0042 is not in message file C:\\X.MSG.\r\n"
        );
        assert!(failure_text(2, 1, b"X").is_none(), "not a message failure");
        assert!(is_system_file(b"C:\\OS2\\SYSTEM\\oso001.msg"));
        assert!(!is_system_file(b"OSO001.TXT"));
    }

    #[test]
    fn messages_are_sorted_and_unique() {
        assert!(MESSAGES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(MESSAGES.iter().all(|m| m.2.ends_with("\r\n")));
    }
}
