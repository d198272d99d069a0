//! The helpers of CANN's `acl_base_rt.h` and `acl_rt.h` that programs call without a
//! device: package versions (`aclsysGetVersionStr`, `aclsysGetVersionNum`), element sizes
//! (`aclDataTypeSize`) and half-precision conversions (`aclFloatToFloat16`,
//! `aclFloat16ToFloat`), with CANN's answers for the corner cases.

use super::prelude::*;
use mempool_ascend::sys::{aclDataType, aclFloat16};

/// `ACL_PKG_VERSION_MAX_SIZE`: the size of the buffer `aclsysGetVersionStr` writes.
pub const PKG_VERSION_MAX_SIZE: usize = 128;

/// The version of package `name`, as CANN finds it: the `Version=` line of
/// `$ASCEND_HOME_PATH/share/info/<name>/version.info` (with `-` and `_` tried both ways);
/// without one, `runtime` is this library's own version. Anything else: 100003.
fn package_version(name: &str, op: &'static str) -> mempool_hal::Result<String> {
    let from_file = std::env::var_os("ASCEND_HOME_PATH").and_then(|home| {
        [name.to_string(), name.replace('-', "_"), name.replace('_', "-")].into_iter().find_map(|n| {
            let text =
                std::fs::read_to_string(std::path::Path::new(&home).join("share/info").join(n).join("version.info"))
                    .ok()?;
            text.lines().find_map(|l| l.trim().strip_prefix("Version=").map(|v| v.trim().to_string()))
        })
    });
    match from_file {
        Some(v) => Ok(v),
        None if name == "runtime" => Ok(env!("CARGO_PKG_VERSION").to_string()),
        None => Err(err(
            sys::ACL_ERROR_INVALID_FILE,
            op,
            format!("no version.info of package {name:?} (under $ASCEND_HOME_PATH/share/info)"),
        )),
    }
}

/// `X.Y.Z` with an optional `alpha`/`beta`/`rc` suffix and number, as CANN's number:
/// `X*10^7 + Y*10^5 + Z*1000`, minus 300/200/100 for the suffix, plus its number.
fn version_number(v: &str) -> Option<i32> {
    let mut parts = v.splitn(4, '.');
    let x: i64 = parts.next()?.parse().ok()?;
    let y: i64 = parts.next()?.parse().ok()?;
    let p = parts.next()?;
    let (z_text, rest) = match p.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&p[..i], Some(p[i..].trim_start_matches('-'))),
        None => (p, parts.next()),
    };
    let z: i64 = z_text.parse().ok()?;
    let mut n = x * 10_000_000 + y * 100_000 + z * 1000;
    if let Some(suffix) = rest.filter(|s| !s.is_empty()) {
        let lower = suffix.to_ascii_lowercase();
        let (minus, tail) = [("alpha", 300), ("beta", 200), ("rc", 100)]
            .into_iter()
            .find_map(|(k, m)| lower.strip_prefix(k).map(|t| (m, t.to_string())))?;
        let tail = tail.trim_start_matches(['.', '-']);
        n -= minus;
        if !tail.is_empty() {
            n += tail.parse::<i64>().ok()?;
        }
    }
    i32::try_from(n).ok()
}

/// Reads a package name from C.
fn package_name(name: *mut c_char, op: &'static str) -> mempool_hal::Result<String> {
    non_null(name, op, "pkgName")?;
    // SAFETY: non-null, and the caller passes a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
}

/// `aclError aclsysGetVersionStr(char *pkgName, char *versionStr)`: writes the package's
/// version, NUL-terminated, into `versionStr` (at least `ACL_PKG_VERSION_MAX_SIZE`, 128,
/// bytes). NULL: 100000; an unknown package: 100003; a version of 128 bytes or more:
/// 500000.
///
/// # Safety
///
/// See the module docs; `versionStr` must be writable for 128 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetVersionStr(name: *mut c_char, version: *mut c_char) -> aclError {
    const OP: &str = "aclsysGetVersionStr";
    ffi(OP, || {
        non_null(version, OP, "versionStr")?;
        let v = package_version(&package_name(name, OP)?, OP)?;
        if v.len() >= PKG_VERSION_MAX_SIZE {
            return Err(err(500_000, OP, format!("version {v:?} does not fit in {PKG_VERSION_MAX_SIZE} bytes")));
        }
        // SAFETY: the caller's buffer holds 128 bytes, and `v` and its NUL fit.
        unsafe {
            std::ptr::copy_nonoverlapping(v.as_ptr(), version.cast::<u8>(), v.len());
            version.add(v.len()).write(0);
        }
        Ok(())
    })
}

/// `aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)`: the version as
/// CANN's number (`8.5.0` is 80500000, `8.5.0.alpha001` 80499701). NULL: 100000; an
/// unknown package: 100003; a version that is not `X.Y.Z[suffix]`: 500000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetVersionNum(name: *mut c_char, number: *mut i32) -> aclError {
    const OP: &str = "aclsysGetVersionNum";
    ffi(OP, || {
        non_null(number, OP, "versionNum")?;
        let v = package_version(&package_name(name, OP)?, OP)?;
        let n = version_number(&v)
            .ok_or_else(|| err(500_000, OP, format!("version {v:?} is not X.Y.Z with an optional suffix")))?;
        // SAFETY: non-null, and the caller passes a writable `int32_t`.
        unsafe { number.write(n) };
        Ok(())
    })
}

/// `size_t aclDataTypeSize(aclDataType dataType)`: the element size in bytes, as CANN
/// answers it: 0 for `ACL_STRING` and `ACL_DT_UNDEFINED`, 8 for any value it does not list
/// (the 6- and 4-bit float types included).
///
/// # Safety
///
/// No pointer arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDataTypeSize(data_type: aclDataType) -> usize {
    match data_type {
        13 | -1 => 0,
        30 | 29 | 12 | 2 | 4 | 34 | 35 | 36 | 37 => 1,
        1 | 6 | 7 | 27 => 2,
        0 | 3 | 8 | 33 => 4,
        17 => 16,
        _ => 8,
    }
}

/// `aclFloat16 aclFloatToFloat16(float value)`: rounded to nearest, ties to even, and
/// saturating as CANN does: magnitudes beyond the half range, infinities and NaN become
/// ±65504.
///
/// # Safety
///
/// No pointer arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFloatToFloat16(value: f32) -> aclFloat16 {
    to_half(value)
}

/// `float aclFloat16ToFloat(aclFloat16 value)`: exact for finite halves; as in CANN, the
/// top exponent is read as an ordinary one (+Inf is 65536, NaN 0x7E00 is 98304).
///
/// # Safety
///
/// No pointer arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFloat16ToFloat(value: aclFloat16) -> f32 {
    from_half(value)
}

/// The half nearest `x` (ties to even), saturated at ±65504.
pub(crate) fn to_half(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let a = x.abs();
    if a.is_nan() || a >= 65520.0 {
        // 65520 and above (and NaN) round past the largest half: saturated.
        return sign | 0x7BFF;
    }
    let exp = ((bits >> 23) & 0xFF) as i32;
    let mant = bits & 0x7F_FFFF;
    if exp < 103 {
        // Below half the smallest denormal (2^-25), or exactly it with no mantissa: zero.
        return if exp == 102 && mant != 0 { sign | 1 } else { sign };
    }
    // The value as an integer count of the smallest denormal (2^-24), with 13 guard bits.
    let full = mant | 0x80_0000;
    let (shift, base) = if exp < 113 { ((126 - exp) as u32, 0u32) } else { (13, ((exp - 112) as u32) << 10) };
    let kept = full >> shift;
    let rest = full & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    let mut h = if exp < 113 { kept } else { base + (kept & 0x3FF) };
    if rest > half || (rest == half && h & 1 == 1) {
        h += 1;
    }
    sign | h.min(0x7BFF) as u16
}

/// The float a half's bits stand for, with the top exponent read as an ordinary one.
pub(crate) fn from_half(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1F);
    let mant = f32::from(h & 0x3FF);
    let mag = if exp == 0 { mant * 2f32.powi(-24) } else { (1.0 + mant / 1024.0) * 2f32.powi(exp - 15) };
    sign * mag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_round_to_nearest_even_and_saturate() {
        for x in [0.0f32, 1.0, -2.5, 0.1, 65504.0, 6.1e-5, 5.96e-8, 1234.567] {
            let h = to_half(x);
            assert_eq!(h, half::f16::from_f32(x).to_bits(), "{x}");
            assert_eq!(from_half(h), half::f16::from_bits(h).to_f32(), "{x}");
        }
        assert_eq!(to_half(65520.0), 0x7BFF);
        assert_eq!(to_half(f32::INFINITY), 0x7BFF);
        assert_eq!(to_half(f32::NEG_INFINITY), 0xFBFF);
        assert_eq!(to_half(f32::NAN) & 0x7FFF, 0x7BFF);
        assert_eq!(from_half(0x7C00), 65536.0);
        assert_eq!(from_half(0x7E00), 98304.0);
        assert_eq!(to_half(2f32.powi(-25)), 0);
        assert_eq!(to_half(2f32.powi(-25) * 1.5), 1);
    }

    #[test]
    fn versions_number_as_cann_does() {
        assert_eq!(version_number("8.5.0"), Some(80_500_000));
        assert_eq!(version_number("8.5.0.alpha001"), Some(80_499_701));
        assert_eq!(version_number("0.1.0"), Some(100_000));
        assert_eq!(version_number("8.5.0-rc1"), Some(80_499_901));
        assert_eq!(version_number("8.5"), None);
        assert_eq!(version_number("8.5.0.gamma"), None);
    }
}
