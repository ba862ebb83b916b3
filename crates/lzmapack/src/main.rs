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
