//! The LZMA encoder of partkit's build: `partkit-lzmapack IN OUT [DICT]` writes IN compressed
//! for `crates/unlzma`, as one properties byte and then liblzma's raw LZMA1 stream (ended by an
//! end marker), with DICT, if given, as the preset dictionary: the encoder starts with DICT in its
//! window, so the stream refers to DICT's bytes as if they had come just before IN's, and only a
//! decoder given the same DICT can unpack it. lc 3, lp 0, pb 0 (WebAssembly is a stream of bytes
//! with no alignment: position bits cost more than they save), preset 9 extreme, a window of
//! 4 MiB (larger than DICT and IN together).
use lzma_sys::*;
use std::{fs, process::ExitCode, ptr};

const LC: u32 = 3;
const LP: u32 = 0;
const PB: u32 = 0;

fn pack(input: &[u8], dict: &[u8]) -> Result<Vec<u8>, String> {
    // SAFETY: liblzma's C API as documented in lzma/lzma12.h, base.h and filter.h: the options
    // and the dictionary outlive the encoder, which is ended before they are dropped.
    unsafe {
        let mut opts: lzma_options_lzma = std::mem::zeroed();
        if lzma_lzma_preset(&mut opts, 9 | LZMA_PRESET_EXTREME) != 0 {
            return Err("lzma_lzma_preset failed".into());
        }
        opts.dict_size = 1 << 22;
        opts.lc = LC;
        opts.lp = LP;
        opts.pb = PB;
        if !dict.is_empty() {
            opts.preset_dict = dict.as_ptr();
            opts.preset_dict_size = u32::try_from(dict.len()).map_err(|_| "dictionary too large")?;
        }
        let filters = [
            lzma_filter { id: LZMA_FILTER_LZMA1, options: ptr::addr_of_mut!(opts).cast() },
            lzma_filter { id: LZMA_VLI_UNKNOWN, options: ptr::null_mut() },
        ];
        let mut strm: lzma_stream = std::mem::zeroed();
        let ret = lzma_raw_encoder(&mut strm, filters.as_ptr());
        if ret != LZMA_OK {
            return Err(format!("lzma_raw_encoder: {ret}"));
        }
        let mut out = vec![((PB * 5 + LP) * 9 + LC) as u8];
        let mut buf = vec![0u8; 1 << 16];
        strm.next_in = input.as_ptr();
        strm.avail_in = input.len();
        loop {
            strm.next_out = buf.as_mut_ptr();
            strm.avail_out = buf.len();
            let ret = lzma_code(&mut strm, LZMA_FINISH);
            out.extend_from_slice(&buf[..buf.len() - strm.avail_out]);
            if ret == LZMA_STREAM_END {
                break;
            }
            if ret != LZMA_OK {
                lzma_end(&mut strm);
                return Err(format!("lzma_code: {ret}"));
            }
        }
        lzma_end(&mut strm);
        Ok(out)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(2..=3).contains(&args.len()) {
        eprintln!("usage: partkit-lzmapack IN OUT [DICT]");
        return ExitCode::from(2);
    }
    let run = || -> Result<(), String> {
        let read = |p: &String| fs::read(p).map_err(|e| format!("{p}: {e}"));
        let input = read(&args[0])?;
        let dict = args.get(2).map(read).transpose()?.unwrap_or_default();
        fs::write(&args[1], pack(&input, &dict)?).map_err(|e| format!("{}: {e}", args[1]))
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("partkit-lzmapack: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pack;
    use partkit_unlzma::{decode_into, PROBS};

    /// Bytes that compress like code: repeated runs with changes, and some noise.
    fn sample(seed: u32, len: usize) -> Vec<u8> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let r = next();
            if r % 3 == 0 && out.len() > 64 {
                let back = (next() as usize % out.len().min(4096)) + 1;
                let n = (next() % 40 + 3) as usize;
                for _ in 0..n {
                    out.push(out[out.len() - back]);
                }
            } else {
                out.push((r >> 8) as u8 % 32);
            }
        }
        out.truncate(len);
        out
    }

    fn unpack(packed: &[u8], dict: &[u8], size: usize) -> Option<Vec<u8>> {
        let mut out = dict.to_vec();
        out.resize(dict.len() + size, 0);
        let mut probs = Box::new([0u16; PROBS]);
        decode_into(packed, &mut out, dict.len(), &mut probs).then(|| out.split_off(dict.len()))
    }

    #[test]
    fn round_trips_with_and_without_a_dictionary() {
        for (seed, len) in [(1, 0), (2, 1), (3, 100), (4, 70_000), (5, 300_000)] {
            let data = sample(seed, len);
            let dict = sample(seed + 100, 50_000);
            for d in [&[][..], &dict[..]] {
                let packed = pack(&data, d).unwrap();
                assert_eq!(unpack(&packed, d, data.len()).as_deref(), Some(&data[..]), "seed {seed}, dict {}", d.len());
            }
        }
    }

    #[test]
    fn a_dictionary_is_used_and_needed() {
        let dict = sample(7, 60_000);
        // data made mostly of the dictionary's bytes
        let data: Vec<u8> = dict[10_000..40_000].iter().chain(&sample(8, 2_000)).chain(&dict[..20_000]).copied().collect();
        let alone = pack(&data, &[]).unwrap();
        let against = pack(&data, &dict).unwrap();
        assert!(against.len() * 4 < alone.len(), "{} against {}", against.len(), alone.len());
        // without it, or with another, the stream does not give the data back
        assert_ne!(unpack(&against, &[], data.len()).as_deref(), Some(&data[..]));
        let other = sample(9, 60_000);
        assert_ne!(unpack(&against, &other, data.len()).as_deref(), Some(&data[..]));
    }

    #[test]
    fn malformed_streams_are_refused() {
        let data = sample(11, 20_000);
        let packed = pack(&data, &[]).unwrap();
        assert_eq!(unpack(&packed[..packed.len() / 2], &[], data.len()), None);
        assert_eq!(unpack(&packed, &[], data.len() + 1), None);
        assert_eq!(unpack(&packed, &[], data.len() - 1), None);
        let mut longer = packed.clone();
        longer.push(0);
        assert_eq!(unpack(&longer, &[], data.len()), None);
        // every single corrupted byte: refused or the full length, never a panic
        for i in 1..packed.len() {
            let mut bad = packed.clone();
            bad[i] ^= 0x55;
            if let Some(out) = unpack(&bad, &[], data.len()) {
                assert_eq!(out.len(), data.len());
            }
        }
    }
}
