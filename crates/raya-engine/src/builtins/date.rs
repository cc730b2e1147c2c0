//! Built-ins: `Date`, as V8 (Node 20) has it.
//!
//! A date is a host object (`vm::host`) whose payload is its time value
//! (milliseconds since the epoch, or NaN), kept as the bits of an `f64` in
//! an atomic so the setters can change it through a shared reference. Its
//! class is the global `Date` (a built-in class with a native constructor
//! that returns the host object), so `instanceof Date` and the methods on
//! `Date.prototype` work as for any class instance.
//!
//! The calendar arithmetic is ECMAScript's own (MakeDay, MakeTime,
//! TimeClip, the ±8.64e15 ms range): JS dates use a proleptic Gregorian
//! calendar over ±273,790 years, which is what the spec's algorithms
//! define. Everything that depends on the time zone (offsets, daylight
//! saving, which instant a local wall-clock time means) comes from `jiff`
//! and its time-zone database: the zone is the one `TZ` names, or the
//! system's. Times outside jiff's range (years ±9999) use the offset at the
//! nearest end of that range.

use super::number::to_number;
use crate::vm::host::{HostClass, HostObj};
use crate::vm::native::{arg, NativeCtx};
use crate::vm::object::{Body, BuiltinKind};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::runtime::Runtime;
use crate::vm::value::Value;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Dates are host objects of this description; the class they report is
/// the global `Date` (see [`new_date`]).
pub static DATE_HOST: HostClass = HostClass { name: "Date", methods: &[], getters: &[], next: None, inspect: None };

/// The payload: the time value's bits. Relaxed ordering is enough: a date
/// shared between tasks is a plain data race in the script, as a shared
/// array element is; each read or write is still whole.
struct DateCell(AtomicU64);

const MS_PER_DAY: f64 = 86_400_000.0;
const MS_PER_HOUR: f64 = 3_600_000.0;
const MS_PER_MINUTE: f64 = 60_000.0;
const MS_PER_SECOND: f64 = 1000.0;
/// TimeClip's bound: 100,000,000 days either side of the epoch.
const MAX_TIME: f64 = 8.64e15;

const DAY_NAMES: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTH_NAMES: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let class = b.class("Date", Value::UNDEFINED, BuiltinKind::Ordinary, Some(date_ctor), Some(date_call));
    b.static_native(class, "now", super::process::date_now);
    b.static_native(class, "parse", date_parse);
    b.static_native(class, "UTC", date_utc);
    Builder::class_data(class).statics.set(crate::vm::atom::Atom::intern("length"), Value::number(7.0));
    let methods: &[(&'static str, crate::vm::object::NativeFn)] = &[
        ("getTime", get_time),
        ("valueOf", get_time),
        ("getTimezoneOffset", get_timezone_offset),
        ("getFullYear", get_full_year),
        ("getMonth", get_month),
        ("getDate", get_date),
        ("getDay", get_day),
        ("getHours", get_hours),
        ("getMinutes", get_minutes),
        ("getSeconds", get_seconds),
        ("getMilliseconds", get_milliseconds),
        ("getUTCFullYear", get_utc_full_year),
        ("getUTCMonth", get_utc_month),
        ("getUTCDate", get_utc_date),
        ("getUTCDay", get_utc_day),
        ("getUTCHours", get_utc_hours),
        ("getUTCMinutes", get_utc_minutes),
        ("getUTCSeconds", get_utc_seconds),
        ("getUTCMilliseconds", get_utc_milliseconds),
        ("setTime", set_time),
        ("setMilliseconds", set_milliseconds),
        ("setSeconds", set_seconds),
        ("setMinutes", set_minutes),
        ("setHours", set_hours),
        ("setDate", set_date),
        ("setMonth", set_month),
        ("setFullYear", set_full_year),
        ("setUTCMilliseconds", set_utc_milliseconds),
        ("setUTCSeconds", set_utc_seconds),
        ("setUTCMinutes", set_utc_minutes),
        ("setUTCHours", set_utc_hours),
        ("setUTCDate", set_utc_date),
        ("setUTCMonth", set_utc_month),
        ("setUTCFullYear", set_utc_full_year),
        ("toISOString", to_iso_string),
        ("toJSON", to_json),
        ("toString", to_string),
        ("toDateString", to_date_string),
        ("toTimeString", to_time_string),
        ("toUTCString", to_utc_string),
        ("toGMTString", to_utc_string),
        ("toLocaleString", to_locale_string),
        ("toLocaleDateString", to_locale_date_string),
        ("toLocaleTimeString", to_locale_time_string),
    ];
    for &(name, f) in methods {
        b.proto_native(class, name, f);
    }
    realm.globals[super::global_slot("Date")] = class;
}

// ---------------------------------------------------------------------------
// Date values
// ---------------------------------------------------------------------------

/// The time value of `v`, if it is a date.
pub fn time_value(v: Value) -> Option<f64> {
    let v = date_of(v);
    crate::vm::host::payload::<DateCell>(v, &DATE_HOST).map(|c| f64::from_bits(c.0.load(Ordering::Relaxed)))
}

/// The key under which an instance of a subclass of `Date` holds its date
/// (a host object, made by `super(...)`): a symbol, so no script names it
/// and no key listing shows it.
pub fn subclass_slot() -> crate::vm::atom::Atom {
    static SLOT: std::sync::OnceLock<crate::vm::atom::Atom> = std::sync::OnceLock::new();
    *SLOT.get_or_init(|| crate::vm::atom::Atom::new_symbol("[[DateValue]]"))
}

/// The date `v` stands for: `v` itself, or the date an instance of a
/// subclass of `Date` holds. Every method of `Date.prototype` reads and
/// writes through this, so a subclass's instance is an ordinary object
/// (its own fields, its class's methods) that behaves as a date.
fn date_of(v: Value) -> Value {
    match v.as_obj().map(|o| &o.body) {
        Some(Body::Object(_)) => ops::object_data(v).and_then(|d| d.props.get(subclass_slot())).unwrap_or(v),
        _ => v,
    }
}

/// The time value of an instance of a subclass of `Date` (not of a date
/// itself), for printing it.
pub fn subclass_time_value(d: &crate::vm::object::ObjectData) -> Option<f64> {
    d.props.get(subclass_slot()).and_then(time_value)
}

/// The time value of a date host object's body.
pub fn host_time_value(h: &HostObj) -> Option<f64> {
    if !std::ptr::eq(h.desc, &DATE_HOST) {
        return None;
    }
    h.get::<DateCell>().map(|c| f64::from_bits(c.0.load(Ordering::Relaxed)))
}

/// A new date with time value `t` (already clipped).
pub fn new_date(rt: &mut Runtime, t: f64) -> Value {
    let class = rt.realm.globals[super::global_slot("Date")];
    rt.heap.alloc(Body::Host(HostObj {
        class,
        desc: &DATE_HOST,
        data: Arc::new(DateCell(AtomicU64::new(t.to_bits()))),
        fields: Box::new([]),
    }))
}

/// The time value of the receiver of a getter (V8's message for those).
fn this_time(ctx: &mut NativeCtx, this: Value) -> Result<f64, Value> {
    time_value(this).ok_or_else(|| ctx.type_error("this is not a Date object."))
}

/// The time value of the receiver of any other method.
fn this_date(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<f64, Value> {
    match time_value(this) {
        Some(t) => Ok(t),
        None => {
            let who = super::array::describe_non_function(ctx.realm(), this);
            Err(ctx.type_error(format!("Method Date.prototype.{method} called on incompatible receiver {who}")))
        }
    }
}

fn store(this: Value, t: f64) -> Value {
    if let Some(c) = crate::vm::host::payload::<DateCell>(date_of(this), &DATE_HOST) {
        c.0.store(t.to_bits(), Ordering::Relaxed);
    }
    Value::number(t)
}

fn now_ms() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as f64).unwrap_or(0.0)
}

// ---------------------------------------------------------------------------
// ECMAScript's time arithmetic (ECMA-262 §21.4.1)
// ---------------------------------------------------------------------------

/// ToIntegerOrInfinity, with NaN kept (the callers turn a non-finite
/// component into NaN).
fn integer(x: f64) -> f64 {
    if x.is_finite() {
        x.trunc() + 0.0
    } else {
        x
    }
}

/// TimeClip.
pub fn time_clip(t: f64) -> f64 {
    if !t.is_finite() || t.abs() > MAX_TIME {
        f64::NAN
    } else {
        t.trunc() + 0.0
    }
}

/// Days from 1970-01-01 to `y`-`m`-`d` (proleptic Gregorian, `m` 1..=12).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of day `z` since the epoch: (year, month 1..=12, day).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// MakeDay(year, month, date): month may be any integer (it carries into
/// the year), date any integer (it carries through months).
fn make_day(year: f64, month: f64, date: f64) -> f64 {
    if !year.is_finite() || !month.is_finite() || !date.is_finite() {
        return f64::NAN;
    }
    let (y, m, dt) = (integer(year), integer(month), integer(date));
    let ym = y + (m / 12.0).floor();
    // Far outside the representable range: the result would be clipped.
    if ym.abs() > 400_000.0 {
        return f64::NAN;
    }
    let mn = m.rem_euclid(12.0);
    days_from_civil(ym as i64, mn as i64 + 1, 1) as f64 + dt - 1.0
}

/// MakeTime(hour, min, sec, ms).
fn make_time(h: f64, m: f64, s: f64, ms: f64) -> f64 {
    if !h.is_finite() || !m.is_finite() || !s.is_finite() || !ms.is_finite() {
        return f64::NAN;
    }
    integer(h) * MS_PER_HOUR + integer(m) * MS_PER_MINUTE + integer(s) * MS_PER_SECOND + integer(ms)
}

/// MakeDate(day, time).
fn make_date(day: f64, time: f64) -> f64 {
    if !day.is_finite() || !time.is_finite() {
        return f64::NAN;
    }
    let tv = day * MS_PER_DAY + time;
    if tv.is_finite() {
        tv
    } else {
        f64::NAN
    }
}

/// The fields of a (finite) time value, in the view it is given in.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fields {
    year: i64,
    /// 0..=11, as JS counts months.
    month: i64,
    day: i64,
    weekday: i64,
    hour: i64,
    minute: i64,
    second: i64,
    ms: i64,
}

fn fields(t: f64) -> Fields {
    let day = (t / MS_PER_DAY).floor();
    let in_day = (t - day * MS_PER_DAY) as i64;
    let (year, month, d) = civil_from_days(day as i64);
    Fields {
        year,
        month: month - 1,
        day: d,
        weekday: (4 + day as i64).rem_euclid(7),
        hour: in_day / 3_600_000,
        minute: in_day / 60_000 % 60,
        second: in_day / 1000 % 60,
        ms: in_day % 1000,
    }
}

fn day_of(t: f64) -> f64 {
    (t / MS_PER_DAY).floor()
}

fn time_within_day(t: f64) -> f64 {
    t - day_of(t) * MS_PER_DAY
}

// ---------------------------------------------------------------------------
// The local time zone (jiff)
// ---------------------------------------------------------------------------

/// The program's time zone, and whether it has a name to print: `TZ` if
/// set (an IANA name, or a POSIX rule), else the system's. An empty or
/// unknown `TZ`, or a system zone that cannot be read, is UTC without a
/// name (`GMT+00:00`), as in Node.
fn zone_and_naming() -> &'static (TimeZone, bool) {
    static ZONE: OnceLock<(TimeZone, bool)> = OnceLock::new();
    ZONE.get_or_init(|| {
        if std::env::var_os("TZ").is_some_and(|tz| tz.is_empty()) {
            return (TimeZone::UTC, false);
        }
        match TimeZone::try_system() {
            Ok(tz) => (tz, true),
            Err(_) => (TimeZone::UTC, false),
        }
    })
}

fn local_zone() -> &'static TimeZone {
    &zone_and_naming().0
}

/// `t` (ms since the epoch) as a jiff timestamp with the same offset.
/// Past jiff's last year (9999) the zone's current rules go on: `t` moves
/// back by whole 400-year Gregorian cycles (same dates, same weekdays).
/// Before its first, the zone's earliest offset (local mean time) holds.
fn timestamp_near(t: f64) -> Timestamp {
    const CYCLE_MS: i64 = 146_097 * 86_400_000;
    let lo = Timestamp::MIN.as_millisecond();
    let hi = Timestamp::MAX.as_millisecond();
    let mut ms = t as i64;
    if ms > hi {
        ms -= (ms - hi + CYCLE_MS - 1) / CYCLE_MS * CYCLE_MS;
    }
    Timestamp::from_millisecond(ms.clamp(lo, hi)).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// The zone's offset from UTC at instant `t`, in whole seconds.
fn offset_seconds_at(t: f64) -> i32 {
    local_zone().to_offset(timestamp_near(t)).seconds()
}

/// LocalTime(t): the wall-clock time value of instant `t`.
fn local_time(t: f64) -> f64 {
    t + offset_seconds_at(t) as f64 * 1000.0
}

/// UTC(t): the instant a wall-clock time value means. A time skipped by a
/// forward shift is read with the offset before the shift (2:30 becomes
/// 3:30 daylight time); a repeated time means its first occurrence. That is
/// ECMAScript's rule, and jiff's "compatible" disambiguation.
fn utc_of_local(t: f64) -> f64 {
    // Past the range by more than any offset: TimeClip gives NaN anyway,
    // and the day count would not fit the calendar arithmetic.
    if !t.is_finite() || t.abs() > MAX_TIME + MS_PER_DAY {
        return f64::NAN;
    }
    let f = fields(t);
    if (-9999..=9999).contains(&f.year) {
        let dt = jiff::civil::DateTime::new(
            f.year as i16,
            (f.month + 1) as i8,
            f.day as i8,
            f.hour as i8,
            f.minute as i8,
            f.second as i8,
            (f.ms * 1_000_000) as i32,
        );
        if let Ok(zoned) = dt.and_then(|dt| local_zone().to_ambiguous_zoned(dt).compatible()) {
            return zoned.timestamp().as_millisecond() as f64;
        }
    }
    t - offset_seconds_at(t) as f64 * 1000.0
}

/// getTimezoneOffset(): minutes, positive west of Greenwich, truncated as
/// V8 does for offsets with seconds (local mean time before 1900).
fn timezone_offset_minutes(t: f64) -> f64 {
    let secs = offset_seconds_at(t);
    (-(secs as f64) / 60.0).trunc() + 0.0
}

/// `GMT-0500` and the zone's name, as `toString` ends.
fn zone_suffix(t: f64) -> String {
    let minutes = -timezone_offset_minutes(t) as i64;
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.abs();
    let info = local_zone().to_offset_info(timestamp_near(t));
    let name = zone_long_name(local_zone().iana_name(), info.abbreviation(), info.dst().is_dst(), minutes);
    format!("GMT{sign}{:02}{:02} ({name})", m / 60, m % 60)
}

/// The English long name of the zone at one instant, as ICU gives it to
/// Node (`Eastern Standard Time`), for the zones most programs run in;
/// others print as `GMT+04:00`, which is ICU's own form for a zone it has
/// no name for.
fn zone_long_name(iana: Option<&str>, abbreviation: &str, dst: bool, offset_minutes: i64) -> String {
    let named = zone_and_naming().1;
    let by_abbreviation = match abbreviation {
        _ if !named => None,
        "UTC" => Some("Coordinated Universal Time"),
        "EST" | "EDT" | "EWT" | "EPT" => Some(if dst { "Eastern Daylight Time" } else { "Eastern Standard Time" }),
        "CST" | "CDT" | "CWT" | "CPT" if iana.is_some_and(|z| z.starts_with("America/")) => {
            Some(if dst { "Central Daylight Time" } else { "Central Standard Time" })
        }
        "MST" | "MDT" | "MWT" | "MPT" => Some(if dst { "Mountain Daylight Time" } else { "Mountain Standard Time" }),
        "PST" | "PDT" | "PWT" | "PPT" => Some(if dst { "Pacific Daylight Time" } else { "Pacific Standard Time" }),
        "AKST" | "AKDT" => Some(if dst { "Alaska Daylight Time" } else { "Alaska Standard Time" }),
        "HST" | "HDT" => Some(if dst { "Hawaii-Aleutian Daylight Time" } else { "Hawaii-Aleutian Standard Time" }),
        "CET" | "CEST" => Some(if dst { "Central European Summer Time" } else { "Central European Standard Time" }),
        "EET" | "EEST" => Some(if dst { "Eastern European Summer Time" } else { "Eastern European Standard Time" }),
        "WET" | "WEST" => Some(if dst { "Western European Summer Time" } else { "Western European Standard Time" }),
        "BST" if iana == Some("Europe/London") => Some("British Summer Time"),
        "JST" => Some("Japan Standard Time"),
        "KST" => Some("Korean Standard Time"),
        "AEST" | "AEDT" => {
            Some(if dst { "Australian Eastern Daylight Time" } else { "Australian Eastern Standard Time" })
        }
        "MSK" => Some("Moscow Standard Time"),
        _ => None,
    };
    if let Some(name) = by_abbreviation {
        return name.into();
    }
    // Periods without a modern abbreviation (local mean time, war time)
    // take the name of the zone's standard or daylight time, as ICU does.
    let by_zone = match iana.unwrap_or("") {
        "UTC" | "Etc/UTC" | "Etc/UCT" | "Etc/Universal" | "Etc/Zulu" | "Universal" | "Zulu" | "UCT" => {
            Some(("Coordinated Universal Time", "Coordinated Universal Time"))
        }
        "GMT" | "Etc/GMT" | "Etc/Greenwich" | "Greenwich" => Some(("Greenwich Mean Time", "Greenwich Mean Time")),
        "Europe/London" => Some(("Greenwich Mean Time", "British Summer Time")),
        "Europe/Dublin" => Some(("Greenwich Mean Time", "Irish Standard Time")),
        "America/New_York" | "America/Detroit" | "America/Toronto" => {
            Some(("Eastern Standard Time", "Eastern Daylight Time"))
        }
        "America/Chicago" => Some(("Central Standard Time", "Central Daylight Time")),
        "America/Denver" | "America/Phoenix" => Some(("Mountain Standard Time", "Mountain Daylight Time")),
        "America/Los_Angeles" => Some(("Pacific Standard Time", "Pacific Daylight Time")),
        "Europe/Paris" | "Europe/Berlin" | "Europe/Madrid" | "Europe/Rome" | "Europe/Amsterdam" | "Europe/Brussels"
        | "Europe/Vienna" | "Europe/Stockholm" | "Europe/Oslo" | "Europe/Copenhagen" | "Europe/Warsaw"
        | "Europe/Prague" | "Europe/Zurich" | "Europe/Budapest" => {
            Some(("Central European Standard Time", "Central European Summer Time"))
        }
        "Europe/Athens" | "Europe/Helsinki" | "Europe/Kiev" | "Europe/Kyiv" | "Europe/Bucharest" => {
            Some(("Eastern European Standard Time", "Eastern European Summer Time"))
        }
        "Europe/Lisbon" => Some(("Western European Standard Time", "Western European Summer Time")),
        "Asia/Kolkata" | "Asia/Calcutta" => Some(("India Standard Time", "India Standard Time")),
        "Asia/Tokyo" => Some(("Japan Standard Time", "Japan Daylight Time")),
        "Asia/Seoul" => Some(("Korean Standard Time", "Korean Daylight Time")),
        "Asia/Shanghai" => Some(("China Standard Time", "China Daylight Time")),
        "Asia/Dubai" => Some(("Gulf Standard Time", "Gulf Standard Time")),
        "Asia/Singapore" => Some(("Singapore Standard Time", "Singapore Standard Time")),
        "Australia/Sydney" | "Australia/Melbourne" => {
            Some(("Australian Eastern Standard Time", "Australian Eastern Daylight Time"))
        }
        _ => None,
    };
    if let Some((std, daylight)) = by_zone.filter(|_| named) {
        return (if dst { daylight } else { std }).into();
    }
    if offset_minutes == 0 && abbreviation == "GMT" {
        return "Greenwich Mean Time".into();
    }
    let sign = if offset_minutes < 0 { '-' } else { '+' };
    let m = offset_minutes.abs();
    format!("GMT{sign}{:02}:{:02}", m / 60, m % 60)
}

// ---------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------

/// A year as `toString` and `toUTCString` print it: four digits at least,
/// a minus sign before negative years.
fn year_text(y: i64) -> String {
    if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    }
}

/// `toISOString()` of a finite time value.
pub fn iso_string(t: f64) -> String {
    let f = fields(t);
    let year = if (0..=9999).contains(&f.year) {
        format!("{:04}", f.year)
    } else if f.year < 0 {
        format!("-{:06}", -f.year)
    } else {
        format!("+{:06}", f.year)
    };
    format!("{year}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", f.month + 1, f.day, f.hour, f.minute, f.second, f.ms)
}

fn date_part(f: &Fields) -> String {
    format!("{} {} {:02} {}", DAY_NAMES[f.weekday as usize], MONTH_NAMES[f.month as usize], f.day, year_text(f.year))
}

fn time_part(t: f64, f: &Fields) -> String {
    format!("{:02}:{:02}:{:02} {}", f.hour, f.minute, f.second, zone_suffix(t))
}

/// `String(date)`: `Tue Mar 10 2026 01:00:00 GMT-0500 (Eastern Standard
/// Time)`, or `Invalid Date`.
pub fn display(t: f64) -> String {
    if t.is_nan() {
        return "Invalid Date".into();
    }
    let f = fields(local_time(t));
    format!("{} {}", date_part(&f), time_part(t, &f))
}

/// How `console.log` shows a date: its ISO form, as Node does.
pub fn inspect(t: f64) -> String {
    if t.is_nan() {
        "Invalid Date".into()
    } else {
        iso_string(t)
    }
}

/// The en-US forms: `3/8/2026` and `2:30:00 PM`. Years before 1 print
/// as the era's year (1 BC is 1), as ICU does.
fn locale_date(f: &Fields) -> String {
    let year = if f.year <= 0 { 1 - f.year } else { f.year };
    format!("{}/{}/{}", f.month + 1, f.day, year)
}

fn locale_time(f: &Fields) -> String {
    let h12 = if f.hour % 12 == 0 { 12 } else { f.hour % 12 };
    let ampm = if f.hour < 12 { "AM" } else { "PM" };
    format!("{h12}:{:02}:{:02} {ampm}", f.minute, f.second)
}

// ---------------------------------------------------------------------------
// Parsing (Date.parse, new Date(string))
// ---------------------------------------------------------------------------

/// `Date.parse(s)`: the ISO format of ECMA-262 §21.4.1.32 first, then the
/// other forms V8 accepts (what `toString` and `toUTCString` print,
/// `March 8, 2026 10:00 PM`, `3/8/2026`, `2026/03/08`, ...).
pub fn parse(s: &str) -> f64 {
    match parse_iso(s.as_bytes()) {
        Some(t) => t,
        // A signed (extended) year is only ever ISO.
        None if s.starts_with(['+', '-']) => f64::NAN,
        None => parse_legacy(s).unwrap_or(f64::NAN),
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Exactly `n` digits.
    fn digits(&mut self, n: usize) -> Option<i64> {
        let end = self.i + n;
        let part = self.s.get(self.i..end)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.i = end;
        Some(part.iter().fold(0, |acc, &d| acc * 10 + (d - b'0') as i64))
    }
}

/// The ISO format: `YYYY`, `YYYY-MM`, `YYYY-MM-DD` (or `±YYYYYY`), then
/// optionally `THH:mm`, `:ss`, `.sss` (any number of digits) and `Z` or
/// `±HH:mm`. A date alone is UTC; a date and time without an offset is
/// local time.
fn parse_iso(s: &[u8]) -> Option<f64> {
    let mut c = Cursor { s, i: 0 };
    let year = match c.peek()? {
        b'+' | b'-' => {
            let neg = c.peek() == Some(b'-');
            c.i += 1;
            let y = c.digits(6)?;
            if neg && y == 0 {
                return None;
            }
            if neg {
                -y
            } else {
                y
            }
        }
        _ => c.digits(4)?,
    };
    let (mut month, mut day) = (1, 1);
    if c.eat(b'-') {
        month = c.digits(2)?;
        if c.eat(b'-') {
            day = c.digits(2)?;
        }
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let (mut h, mut mi, mut sec, mut ms) = (0, 0, 0, 0.0);
    let mut has_time = false;
    let mut offset: Option<i64> = None;
    if c.eat(b'T') || c.eat(b't') {
        has_time = true;
        h = c.digits(2)?;
        if !c.eat(b':') {
            return None;
        }
        mi = c.digits(2)?;
        if c.eat(b':') {
            sec = c.digits(2)?;
            if c.eat(b'.') {
                let start = c.i;
                while c.peek().is_some_and(|d| d.is_ascii_digit()) {
                    c.i += 1;
                }
                let frac = &s[start..c.i];
                if frac.is_empty() {
                    return None;
                }
                // Milliseconds: the first three digits, the rest dropped.
                let mut v = 0.0;
                for k in 0..3 {
                    v = v * 10.0 + frac.get(k).map_or(0.0, |d| (d - b'0') as f64);
                }
                ms = v;
            }
        }
        if h > 24 || mi > 59 || sec > 59 || (h == 24 && (mi > 0 || sec > 0 || ms > 0.0)) {
            return None;
        }
        match c.peek() {
            Some(b'Z') | Some(b'z') => {
                c.i += 1;
                offset = Some(0);
            }
            Some(sign @ (b'+' | b'-')) => {
                c.i += 1;
                let oh = c.digits(2)?;
                c.eat(b':');
                let om = c.digits(2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                let m = oh * 60 + om;
                offset = Some(if sign == b'-' { -m } else { m });
            }
            _ => {}
        }
    } else if c.eat(b'Z') || c.eat(b'z') {
        offset = Some(0);
    }
    if c.i != s.len() {
        return None;
    }
    let day_num = make_day(year as f64, (month - 1) as f64, day as f64);
    let t = make_date(day_num, make_time(h as f64, mi as f64, sec as f64, ms));
    let t = match offset {
        Some(m) => t - m as f64 * MS_PER_MINUTE,
        None if has_time => utc_of_local(t),
        None => t,
    };
    Some(time_clip(t))
}

/// The forms V8's fallback parser reads: words (month names; day names
/// and anything before the first number are skipped), numbers making a
/// date (M/D/Y, Y/M/D, D Month Y, ...), `h:m[:s[.ms]]` with AM/PM, and a
/// zone (`Z`, `UTC`, `GMT`, `+hhmm`, `-hh:mm`). Without a zone the time is
/// local. Two-digit years are 19xx from 50 and 20xx below; a missing year
/// is 2001, as in V8.
fn parse_legacy(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut nums: Vec<i64> = Vec::new();
    let mut named_month: Option<i64> = None;
    let mut time: Option<(i64, i64, i64, i64)> = None;
    let mut pm: Option<bool> = None;
    let mut utc = false;
    let mut offset: Option<i64> = None;
    let mut iso_like = false;
    let read_num = |i: &mut usize| -> (i64, usize) {
        let start = *i;
        let mut v: i64 = 0;
        while *i < b.len() && b[*i].is_ascii_digit() {
            v = v.saturating_mul(10).saturating_add((b[*i] - b'0') as i64);
            *i += 1;
        }
        (v, *i - start)
    };
    while i < b.len() {
        let ch = b[i];
        if ch.is_ascii_whitespace() || ch == b',' {
            i += 1;
        } else if ch == b'(' {
            let mut depth = 0;
            while i < b.len() {
                match b[i] {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
        } else if ch.is_ascii_digit() {
            let (n, len) = read_num(&mut i);
            if i < b.len() && b[i] == b':' {
                // A time: h:m[:s[.ms]].
                if time.is_some() {
                    return None;
                }
                i += 1;
                let (m, ml) = read_num(&mut i);
                if ml == 0 {
                    return None;
                }
                let (mut sec, mut ms) = (0, 0);
                if i < b.len() && b[i] == b':' {
                    i += 1;
                    let (sv, sl) = read_num(&mut i);
                    if sl == 0 {
                        return None;
                    }
                    sec = sv;
                    if i < b.len() && b[i] == b'.' {
                        i += 1;
                        let start = i;
                        let _ = read_num(&mut i);
                        let frac = &b[start..i];
                        ms = (0..3).fold(0, |acc, k| acc * 10 + frac.get(k).map_or(0, |d| (d - b'0') as i64));
                    }
                }
                time = Some((n, m, sec, ms));
            } else if i < b.len() && b[i] == b'.' && time.is_none() && nums.is_empty() {
                return None;
            } else {
                if nums.is_empty() && len == 4 && i < b.len() && b[i] == b'-' {
                    iso_like = true;
                }
                nums.push(n);
                if nums.len() > 3 {
                    return None;
                }
            }
        } else if ch == b'+' || ch == b'-' {
            i += 1;
            let after_zone_or_time = utc || time.is_some();
            if after_zone_or_time && i < b.len() && b[i].is_ascii_digit() {
                let (n, len) = read_num(&mut i);
                let minutes = if i < b.len() && b[i] == b':' {
                    i += 1;
                    let (m, _) = read_num(&mut i);
                    n * 60 + m
                } else if len <= 2 {
                    n * 60
                } else {
                    n / 100 * 60 + n % 100
                };
                offset = Some(if ch == b'-' { -minutes } else { minutes });
                utc = true;
            }
            // Otherwise a separator between date numbers.
        } else if ch == b'/' || ch == b'.' {
            i += 1;
        } else if ch.is_ascii_alphabetic() {
            let start = i;
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            let word = s[start..i].to_ascii_lowercase();
            let prefix = &word[..word.len().min(3)];
            if let Some(m) = MONTH_NAMES.iter().position(|n| n.eq_ignore_ascii_case(prefix)) {
                if named_month.is_some() || word.len() < 3 {
                    return None;
                }
                named_month = Some(m as i64 + 1);
            } else if word == "am" || word == "pm" {
                pm = Some(word == "pm");
            } else if word == "utc" || word == "gmt" || word == "z" || word == "ut" {
                utc = true;
            } else if word == "t" && !nums.is_empty() {
                // The date/time separator of ISO-like strings.
            } else if DAY_NAMES.iter().any(|n| n.eq_ignore_ascii_case(prefix)) && word.len() >= 3 {
                // Day names are not checked against the date.
            } else if !nums.is_empty() || time.is_some() {
                return None;
            }
        } else {
            return None;
        }
    }
    // The date: up to three numbers and maybe a month name.
    let (mut year, month, day): (Option<i64>, i64, i64);
    let comp = |k: usize| nums.get(k).copied();
    let is_day = |x: i64| (1..=31).contains(&x);
    match named_month {
        None => {
            if nums.is_empty() {
                return None;
            }
            if iso_like || (nums.len() == 3 && !is_day(nums[0])) {
                year = comp(0);
                month = comp(1).unwrap_or(1);
                day = comp(2).unwrap_or(1);
            } else {
                month = nums[0];
                day = comp(1).unwrap_or(1);
                year = comp(2);
            }
        }
        Some(m) => {
            month = m;
            match nums.len() {
                0 => {
                    day = 1;
                    year = None;
                }
                1 => {
                    day = nums[0];
                    year = None;
                }
                2 if !is_day(nums[0]) => {
                    year = Some(nums[0]);
                    day = nums[1];
                }
                2 => {
                    day = nums[0];
                    year = Some(nums[1]);
                }
                _ => return None,
            }
        }
    }
    if !iso_like {
        year = year.map(|y| match y {
            0..=49 => y + 2000,
            50..=99 => y + 1900,
            _ => y,
        });
    }
    let year = year.unwrap_or(2001);
    if !(1..=12).contains(&month) || !is_day(day) {
        return None;
    }
    let (mut h, mi, sec, ms) = time.unwrap_or((0, 0, 0, 0));
    if let Some(pm) = pm {
        if !(0..=12).contains(&h) {
            return None;
        }
        h = h % 12 + if pm { 12 } else { 0 };
    }
    if h > 24 || mi > 59 || sec > 59 || ms > 999 || (h == 24 && (mi, sec, ms) != (0, 0, 0)) {
        return None;
    }
    let t = make_date(
        make_day(year as f64, (month - 1) as f64, day as f64),
        make_time(h as f64, mi as f64, sec as f64, ms as f64),
    );
    let t = if utc { t - offset.unwrap_or(0) as f64 * MS_PER_MINUTE } else { utc_of_local(t) };
    Some(time_clip(t))
}

// ---------------------------------------------------------------------------
// The constructor and statics
// ---------------------------------------------------------------------------

/// The numeric arguments `year, month[, day, h, m, s, ms]` as a time value
/// in the view they are given in (local for `new Date`, UTC for
/// `Date.UTC`); years 0..=99 mean 1900..=1999.
fn from_components(args: &[Value]) -> f64 {
    let num = |i: usize, default: f64| if i < args.len() { to_number(args[i]) } else { default };
    let y = num(0, f64::NAN);
    let m = num(1, 0.0);
    let dt = num(2, 1.0);
    let (h, mi, s, ms) = (num(3, 0.0), num(4, 0.0), num(5, 0.0), num(6, 0.0));
    let yi = integer(y);
    let yr = if !y.is_nan() && (0.0..=99.0).contains(&yi) { 1900.0 + yi } else { y };
    make_date(make_day(yr, m, dt), make_time(h, mi, s, ms))
}

/// `new Date(...)`: now, a time value, a string to parse, another date, or
/// components in local time.
fn date_ctor(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    // `this` is the fresh instance `new` made; its class is another one
    // when a subclass's constructor reached here through `super(...)`.
    // A date is a host object made here; a subclass's instance stays the
    // ordinary object it is and holds the date (`subclass_slot`).
    let date_class = ctx.realm().globals[super::global_slot("Date")];
    let subclass_this = ops::object_data(this).is_some_and(|d| d.class != date_class);
    let t = match args.len() {
        0 => now_ms(),
        1 => {
            let v = args[0];
            if let Some(t) = time_value(v) {
                t
            } else if let Some(s) = ops::as_str(v) {
                parse(s)
            } else {
                time_clip(to_number(v))
            }
        }
        _ => time_clip(utc_of_local(from_components(args))),
    };
    let date = new_date(ctx.rt, t);
    if subclass_this {
        if let Some(mut d) = ops::object_data(this) {
            d.props.set(subclass_slot(), date);
        }
        return Ok(Value::UNDEFINED);
    }
    Ok(date)
}

/// `Date()` without `new`: the current time as a string.
fn date_call(ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    let s = display(now_ms());
    Ok(ctx.str(s))
}

fn date_parse(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let v = arg(args, 0);
    let t = match ops::as_str(v) {
        Some(s) => parse(s),
        None => {
            let s = ops::try_to_display(v).map_err(|f| ctx.fault(f))?;
            parse(&s)
        }
    };
    Ok(Value::number(t))
}

fn date_utc(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::number(time_clip(from_components(args))))
}

// ---------------------------------------------------------------------------
// Getters
// ---------------------------------------------------------------------------

fn get_time(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(Value::number(this_time(ctx, this)?))
}

fn get_timezone_offset(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let t = this_time(ctx, this)?;
    Ok(Value::number(if t.is_nan() { t } else { timezone_offset_minutes(t) }))
}

/// A getter of one field, local or UTC.
fn field_getter(ctx: &mut NativeCtx, this: Value, local: bool, pick: fn(&Fields) -> i64) -> Result<Value, Value> {
    let t = this_time(ctx, this)?;
    if t.is_nan() {
        return Ok(Value::number(f64::NAN));
    }
    let f = fields(if local { local_time(t) } else { t });
    Ok(Value::number(pick(&f) as f64))
}

macro_rules! getters {
    ($($name:ident, $local:expr, $field:ident;)*) => {
        $(
            fn $name(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
                field_getter(ctx, this, $local, |f| f.$field)
            }
        )*
    };
}

getters! {
    get_full_year, true, year;
    get_month, true, month;
    get_date, true, day;
    get_day, true, weekday;
    get_hours, true, hour;
    get_minutes, true, minute;
    get_seconds, true, second;
    get_milliseconds, true, ms;
    get_utc_full_year, false, year;
    get_utc_month, false, month;
    get_utc_date, false, day;
    get_utc_day, false, weekday;
    get_utc_hours, false, hour;
    get_utc_minutes, false, minute;
    get_utc_seconds, false, second;
    get_utc_milliseconds, false, ms;
}

// ---------------------------------------------------------------------------
// Setters
// ---------------------------------------------------------------------------

fn set_time(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    this_date(ctx, this, "setTime")?;
    Ok(store(this, time_clip(to_number(arg(args, 0)))))
}

/// Which fields a setter takes, first to last.
#[derive(Clone, Copy)]
enum Setter {
    Ms,
    Seconds,
    Minutes,
    Hours,
    Date,
    Month,
    FullYear,
}

/// The setters of ECMA-262 §21.4.4.20–28: the arguments replace fields
/// from the named one down (those not passed keep their value); the
/// result is recomputed through MakeDay/MakeTime, so overflow carries.
/// Every argument is converted even when the date is invalid.
fn set_fields(
    ctx: &mut NativeCtx,
    this: Value,
    args: &[Value],
    which: Setter,
    local: bool,
    method: &str,
) -> Result<Value, Value> {
    let t0 = this_date(ctx, this, method)?;
    let nums: Vec<f64> = args.iter().map(|&v| to_number(v)).collect();
    let given = |k: usize| nums.get(k).copied();
    let mut t = if local && !t0.is_nan() { local_time(t0) } else { t0 };
    if t.is_nan() {
        if !matches!(which, Setter::FullYear) {
            return Ok(Value::number(f64::NAN));
        }
        t = 0.0;
    }
    let f = fields(t);
    let first = given(0).unwrap_or(f64::NAN);
    let (mut year, mut month, mut date) = (f.year as f64, f.month as f64, f.day as f64);
    let (mut h, mut mi, mut s, mut ms) = (f.hour as f64, f.minute as f64, f.second as f64, f.ms as f64);
    let new_t = match which {
        Setter::Ms => {
            ms = first;
            make_date(day_of(t), make_time(h, mi, s, ms))
        }
        Setter::Seconds => {
            s = first;
            ms = given(1).unwrap_or(ms);
            make_date(day_of(t), make_time(h, mi, s, ms))
        }
        Setter::Minutes => {
            mi = first;
            s = given(1).unwrap_or(s);
            ms = given(2).unwrap_or(ms);
            make_date(day_of(t), make_time(h, mi, s, ms))
        }
        Setter::Hours => {
            h = first;
            mi = given(1).unwrap_or(mi);
            s = given(2).unwrap_or(s);
            ms = given(3).unwrap_or(ms);
            make_date(day_of(t), make_time(h, mi, s, ms))
        }
        Setter::Date => {
            date = first;
            make_date(make_day(year, month, date), time_within_day(t))
        }
        Setter::Month => {
            month = first;
            date = given(1).unwrap_or(date);
            make_date(make_day(year, month, date), time_within_day(t))
        }
        Setter::FullYear => {
            year = first;
            month = given(1).unwrap_or(month);
            date = given(2).unwrap_or(date);
            make_date(make_day(year, month, date), time_within_day(t))
        }
    };
    let u = if local { utc_of_local(new_t) } else { new_t };
    Ok(store(this, time_clip(u)))
}

macro_rules! setters {
    ($($name:ident, $method:ident, $which:ident, $local:expr;)*) => {
        $(
            fn $name(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
                set_fields(ctx, this, args, Setter::$which, $local, stringify!($method))
            }
        )*
    };
}

setters! {
    set_milliseconds, setMilliseconds, Ms, true;
    set_seconds, setSeconds, Seconds, true;
    set_minutes, setMinutes, Minutes, true;
    set_hours, setHours, Hours, true;
    set_date, setDate, Date, true;
    set_month, setMonth, Month, true;
    set_full_year, setFullYear, FullYear, true;
    set_utc_milliseconds, setUTCMilliseconds, Ms, false;
    set_utc_seconds, setUTCSeconds, Seconds, false;
    set_utc_minutes, setUTCMinutes, Minutes, false;
    set_utc_hours, setUTCHours, Hours, false;
    set_utc_date, setUTCDate, Date, false;
    set_utc_month, setUTCMonth, Month, false;
    set_utc_full_year, setUTCFullYear, FullYear, false;
}

// ---------------------------------------------------------------------------
// String forms
// ---------------------------------------------------------------------------

fn to_iso_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let t = this_date(ctx, this, "toISOString")?;
    if t.is_nan() {
        return Err(ctx.range_error("Invalid time value"));
    }
    let s = iso_string(t);
    Ok(ctx.str(s))
}

fn to_json(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let t = this_date(ctx, this, "toJSON")?;
    if t.is_nan() {
        return Ok(Value::NULL);
    }
    let s = iso_string(t);
    Ok(ctx.str(s))
}

/// A string form of a valid date, or `Invalid Date`.
fn string_form(ctx: &mut NativeCtx, this: Value, method: &str, form: fn(f64) -> String) -> Result<Value, Value> {
    let t = this_date(ctx, this, method)?;
    let s = if t.is_nan() { "Invalid Date".to_string() } else { form(t) };
    Ok(ctx.str(s))
}

fn to_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    string_form(ctx, this, "toString", display)
}

fn to_date_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    string_form(ctx, this, "toDateString", |t| date_part(&fields(local_time(t))))
}

fn to_time_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    string_form(ctx, this, "toTimeString", |t| time_part(t, &fields(local_time(t))))
}

fn to_utc_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    string_form(ctx, this, "toUTCString", |t| {
        let f = fields(t);
        format!(
            "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
            DAY_NAMES[f.weekday as usize],
            f.day,
            MONTH_NAMES[f.month as usize],
            year_text(f.year),
            f.hour,
            f.minute,
            f.second
        )
    })
}

/// The `toLocale*String` methods format in the en-US form only: a locale
/// other than `en-US`, or an options object, is refused rather than
/// silently ignored.
fn check_locale_args(ctx: &mut NativeCtx, args: &[Value], method: &str) -> Result<(), Value> {
    check_en_us(ctx, args, &format!("Date.prototype.{method}"))
}

/// The locale arguments of a `toLocale*String` method (`what`, qualified):
/// undefined or en-US, and no options.
pub(crate) fn check_en_us(ctx: &mut NativeCtx, args: &[Value], what: &str) -> Result<(), Value> {
    let locale = arg(args, 0);
    let en_us = |v: Value| ops::as_str(v).is_some_and(|s| s.eq_ignore_ascii_case("en-US"));
    let ok =
        locale.is_undefined() || en_us(locale) || ops::array_data(locale).is_some_and(|a| a.len() == 1 && en_us(a[0]));
    if !ok {
        return Err(
            ctx.range_error(format!("{what}: only the en-US locale is supported, got {}", ops::to_display(locale)))
        );
    }
    if !arg(args, 1).is_undefined() {
        return Err(ctx.type_error(format!("{what}: options are not supported")));
    }
    Ok(())
}

fn to_locale_string(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    check_locale_args(ctx, args, "toLocaleString")?;
    string_form(ctx, this, "toLocaleString", |t| {
        let f = fields(local_time(t));
        format!("{}, {}", locale_date(&f), locale_time(&f))
    })
}

fn to_locale_date_string(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    check_locale_args(ctx, args, "toLocaleDateString")?;
    string_form(ctx, this, "toLocaleDateString", |t| locale_date(&fields(local_time(t))))
}

fn to_locale_time_string(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    check_locale_args(ctx, args, "toLocaleTimeString")?;
    string_form(ctx, this, "toLocaleTimeString", |t| locale_time(&fields(local_time(t))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_days_round_trip_across_eras() {
        for &(y, m, d) in &[(1970, 1, 1), (2000, 2, 29), (1900, 3, 1), (-1, 12, 31), (0, 1, 1), (275760, 9, 13)] {
            let z = days_from_civil(y, m, d);
            assert_eq!(civil_from_days(z), (y, m, d));
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
        // The first and last days of the range.
        assert_eq!(days_from_civil(-271821, 4, 20) as f64 * MS_PER_DAY, -MAX_TIME);
    }

    #[test]
    fn make_day_carries_months_and_days() {
        // Month 14 of 2026 is March 2027; day 0 is the last of the previous month.
        assert_eq!(make_day(2026.0, 14.0, 1.0), days_from_civil(2027, 3, 1) as f64);
        assert_eq!(make_day(2026.0, -1.0, 1.0), days_from_civil(2025, 12, 1) as f64);
        assert_eq!(make_day(2026.0, 2.0, 0.0), days_from_civil(2026, 2, 28) as f64);
        assert!(make_day(f64::NAN, 0.0, 1.0).is_nan());
        assert!(make_day(1e300, 0.0, 1.0).is_nan());
    }

    #[test]
    fn local_times_far_outside_the_range_are_invalid() {
        assert!(utc_of_local(1e300).is_nan());
        assert!(utc_of_local(-8.64e22).is_nan());
        assert!(utc_of_local(f64::NAN).is_nan());
        assert!(!utc_of_local(MAX_TIME).is_nan());
    }

    #[test]
    fn time_clip_bounds() {
        assert_eq!(time_clip(MAX_TIME), MAX_TIME);
        assert!(time_clip(MAX_TIME + 1.0).is_nan());
        assert_eq!(time_clip(-1.5), -1.0);
        assert!(time_clip(f64::INFINITY).is_nan());
    }

    #[test]
    fn iso_strings_of_extended_years() {
        assert_eq!(iso_string(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_string(MAX_TIME), "+275760-09-13T00:00:00.000Z");
        assert_eq!(iso_string(-62198755200001.0), "-000002-12-31T23:59:59.999Z");
        assert_eq!(fields(-1.0).ms, 999);
        assert_eq!(fields(-1.0).weekday, 3);
    }

    #[test]
    fn parses_iso_forms_exactly() {
        assert_eq!(parse("2026-03-08"), 1772928000000.0);
        assert_eq!(parse("2026-03-08T10:00:00Z"), 1772964000000.0);
        assert_eq!(parse("2026-03-08T10:00:00.123456+05:30"), 1772944200123.0);
        assert_eq!(parse("+002026-03-08T00:00:00Z"), 1772928000000.0);
        assert_eq!(parse("2026-03-08T24:00:00Z"), 1773014400000.0);
        assert!(parse("-000000-01-01T00:00:00Z").is_nan());
        assert!(parse("2026-13-01").is_nan());
        assert!(parse("2026-03-08T25:00Z").is_nan());
    }

    #[test]
    fn parses_the_other_forms_with_zones() {
        assert_eq!(parse("Sun, 08 Mar 2026 15:00:00 GMT"), 1772982000000.0);
        assert_eq!(parse("Sun Mar 08 2026 10:00:00 GMT-0500 (Eastern Standard Time)"), 1772982000000.0);
        assert_eq!(parse("1/2/50 10:00:00 GMT+0100"), -631033200000.0);
        assert!(parse("garbage").is_nan());
        assert!(parse("").is_nan());
        assert!(parse("Mar 8 2026 13:00 PM GMT").is_nan());
    }
}
