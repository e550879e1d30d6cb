//! SHA-256 of images and pages, as `exehdr --json` and the golden analyses
//! report them.

use sha2::{Digest, Sha256};

use crate::model::Object;

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// SHA-256 of an object's unrelocated image without building it: LX pages
/// zero-padded to the page size, zero filled or truncated to the virtual
/// size. For NE (`page_size` 0): the segment data as stored (expanded when
/// iterated), not padded to the minimum allocation.
pub fn image_sha256(object: &Object, page_size: u32) -> String {
    let mut h = Sha256::new();
    if page_size == 0 {
        if let Some(p) = object.pages.first() {
            h.update(&p.data);
        }
        return hex::encode(h.finalize());
    }
    let size = u64::from(object.virtual_size);
    let mut done = 0u64;
    let zeros = [0u8; 4096];
    let feed_zeros = |h: &mut Sha256, mut n: u64| {
        while n > 0 {
            let k = n.min(zeros.len() as u64);
            h.update(&zeros[..k as usize]);
            n -= k;
        }
    };
    for page in &object.pages {
        if done >= size {
            break;
        }
        let take = (page.data.len() as u64).min(size - done);
        h.update(&page.data[..take as usize]);
        let pad = (u64::from(page_size) - take.min(u64::from(page_size))).min(size - done - take);
        feed_zeros(&mut h, pad);
        done += take + pad;
    }
    if done < size {
        feed_zeros(&mut h, size - done);
    }
    hex::encode(h.finalize())
}

/// SHA-256 of a whole decoded page: its data zero-padded to the page size
/// (a zero-filled or invalid page is a page of zeros). This is what the
/// loader puts in memory, and what the golden analyses hash.
pub fn page_sha256(page: &crate::model::Page, page_size: u32) -> String {
    let mut bytes = page.data.clone();
    if bytes.len() < page_size as usize {
        bytes.resize(page_size as usize, 0);
    }
    sha256_hex(&bytes)
}
