//! Time in a query and in a text: the dates and relative expressions a
//! question names ("last week", "in March", "before June 2023",
//! "yesterday", "3 days ago", "on October 24, 2023") read as a time range,
//! and the date a text states (a session's `Date:` line, a title's "8 May,
//! 2023", an ISO date) read as the time of what it tells.
//!
//! No language model and no calendar crate: English month names, a few
//! relative words, and civil-date arithmetic (days from 1970-01-01 in the
//! proleptic Gregorian calendar, UTC). A phrase it does not know is not a
//! time; a query without one ranks exactly as before.

/// Seconds in a day.
const DAY: i64 = 86_400;

/// A half-open span of time, `[from, to)`, in Unix seconds (UTC); an open
/// end is unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeRange {
    /// First second inside, if bounded.
    pub from: Option<i64>,
    /// First second after, if bounded.
    pub to: Option<i64>,
}

impl TimeRange {
    /// Whether `t` (Unix seconds) falls inside.
    pub fn contains(&self, t: i64) -> bool {
        self.from.is_none_or(|f| t >= f) && self.to.is_none_or(|e| t < e)
    }

    /// Distance in days from `t` to the range (0 inside).
    pub fn days_away(&self, t: i64) -> i64 {
        match (self.from, self.to) {
            (Some(f), _) if t < f => (f - t + DAY - 1) / DAY,
            (_, Some(e)) if t >= e => (t - e) / DAY + 1,
            _ => 0,
        }
    }
}

/// Which way a question wants its answers ordered in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeOrder {
    /// "latest", "most recent", "currently", "now", "still": the newest first.
    Newest,
    /// "first", "originally", "initially", "earliest": the oldest first.
    Oldest,
}

/// What a query says about time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeQuery {
    /// The span it names, if any.
    pub range: Option<TimeRange>,
    /// The words that named it (`"before June 2023"`), for `--explain`.
    pub phrase: String,
    /// The order it asks for, if any.
    pub order: Option<TimeOrder>,
}

impl TimeQuery {
    /// Whether the query says nothing about time.
    pub fn is_empty(&self) -> bool {
        self.range.is_none() && self.order.is_none()
    }
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The month (1–12) a word names: full English names and three-letter
/// abbreviations (`sept` too); "may" only as written lower or title case
/// is still a month here — the callers read it next to a year or a
/// preposition.
fn month_of(word: &str) -> Option<u32> {
    let w = word.trim_end_matches('.').to_ascii_lowercase();
    if w.len() < 3 {
        return None;
    }
    if w == "sept" {
        return Some(9);
    }
    MONTHS
        .iter()
        .position(|m| *m == w || (w.len() == 3 && m.starts_with(&w)))
        .map(|i| i as u32 + 1)
}

/// Days from 1970-01-01 to `y-m-d` (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `(year, month, day)` of a day count from 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn month_start(y: i64, m: u32) -> i64 {
    days_from_civil(y, m, 1) * DAY
}

fn month_range(y: i64, m: u32) -> (i64, i64) {
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    (month_start(y, m), month_start(ny, nm))
}

fn year_of(word: &str) -> Option<i64> {
    let w = word.trim_end_matches(|c: char| !c.is_ascii_digit());
    let w = w.trim_start_matches('\'');
    (w.len() == 4 && w.chars().all(|c| c.is_ascii_digit()))
        .then(|| w.parse::<i64>().ok())
        .flatten()
        .filter(|y| (1900..=2199).contains(y))
}

fn day_of(word: &str) -> Option<u32> {
    let w = word
        .trim_end_matches(',')
        .trim_end_matches("st")
        .trim_end_matches("nd")
        .trim_end_matches("rd")
        .trim_end_matches("th");
    (!w.is_empty() && w.len() <= 2 && w.chars().all(|c| c.is_ascii_digit()))
        .then(|| w.parse::<u32>().ok())
        .flatten()
        .filter(|d| (1..=31).contains(d))
}

/// An ISO date `YYYY-MM-DD` (a time after it ignored).
fn iso_date(word: &str) -> Option<(i64, u32, u32)> {
    let w = word.get(..10)?;
    let b = w.as_bytes();
    if b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y = w[..4].parse::<i64>().ok()?;
    let m = w[5..7].parse::<u32>().ok()?;
    let d = w[8..10].parse::<u32>().ok()?;
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}

/// A date or month named at word `i` of `words`: `(start, end, words used)`.
/// `now` places a month given without a year in its latest past (or
/// current) occurrence.
fn date_at(words: &[String], i: usize, now: i64) -> Option<(i64, i64, usize)> {
    let w = words.get(i)?;
    if let Some((y, m, d)) = iso_date(w) {
        let s = days_from_civil(y, m, d) * DAY;
        return Some((s, s + DAY, 1));
    }
    // "8 May, 2023", "16 March 2023", "8 May"
    if let Some(d) = day_of(w)
        && let Some(m) = words.get(i + 1).and_then(|x| month_of(x))
    {
        let (y, used) = match words.get(i + 2).and_then(|x| year_of(x)) {
            Some(y) => (y, 3),
            None => (past_year_of_month(m, now), 2),
        };
        let s = days_from_civil(y, m, d) * DAY;
        return Some((s, s + DAY, used));
    }
    if let Some(m) = month_of(w) {
        // "October 24, 2023", "October 24", "March 2023", "March"
        if let Some(d) = words.get(i + 1).and_then(|x| day_of(x)) {
            let (y, used) = match words.get(i + 2).and_then(|x| year_of(x)) {
                Some(y) => (y, 3),
                None => (past_year_of_month(m, now), 2),
            };
            let s = days_from_civil(y, m, d) * DAY;
            return Some((s, s + DAY, used));
        }
        let (y, used) = match words.get(i + 1).and_then(|x| year_of(x)) {
            Some(y) => (y, 2),
            None => (past_year_of_month(m, now), 1),
        };
        let (s, e) = month_range(y, m);
        return Some((s, e, used));
    }
    if let Some(y) = year_of(w) {
        return Some((month_start(y, 1), month_start(y + 1, 1), 1));
    }
    None
}

/// The year of the latest month `m` that has begun by `now`.
fn past_year_of_month(m: u32, now: i64) -> i64 {
    let (y, cm, _) = civil_from_days(now.div_euclid(DAY));
    if m <= cm { y } else { y - 1 }
}

/// Start of the ISO week (Monday) holding day `days`.
fn week_start(days: i64) -> i64 {
    // 1970-01-01 was a Thursday: Monday is 3 days before.
    days - (days + 3).rem_euclid(7)
}

/// Words of a text, lowercased, punctuation kept only where dates need it
/// (`-` in ISO dates).
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '?' | '!' | ';' | '(' | ')' | '"'))
        .map(|w| {
            w.trim_matches(|c: char| matches!(c, '.' | ':' | '\'' | '`'))
                .trim_end_matches(',')
                .to_ascii_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Reads what `query` says about time, relative to `now` (Unix seconds).
pub fn read_query(query: &str, now: i64) -> TimeQuery {
    let words = words_of(query);
    let today = now.div_euclid(DAY);
    let mut out = TimeQuery {
        order: order_of(&words),
        ..TimeQuery::default()
    };
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let next = words.get(i + 1).map(String::as_str);
        // Relative words first.
        let relative: Option<(i64, i64, usize)> = match (w, next) {
            ("today", _) => Some((today * DAY, (today + 1) * DAY, 1)),
            ("yesterday", _) => Some(((today - 1) * DAY, today * DAY, 1)),
            ("this" | "current", Some("week")) => {
                Some((week_start(today) * DAY, (today + 1) * DAY, 2))
            }
            ("last" | "past" | "previous", Some("week")) => {
                let s = week_start(today) - 7;
                Some((s * DAY, (s + 7) * DAY, 2))
            }
            ("this" | "current", Some("month")) => {
                let (y, m, _) = civil_from_days(today);
                Some((month_start(y, m), (today + 1) * DAY, 2))
            }
            ("last" | "past" | "previous", Some("month")) => {
                let (y, m, _) = civil_from_days(today);
                let (y, m) = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
                let (s, e) = month_range(y, m);
                Some((s, e, 2))
            }
            ("this" | "current", Some("year")) => {
                let (y, _, _) = civil_from_days(today);
                Some((month_start(y, 1), (today + 1) * DAY, 2))
            }
            ("last" | "past" | "previous", Some("year")) => {
                let (y, _, _) = civil_from_days(today);
                Some((month_start(y - 1, 1), month_start(y, 1), 2))
            }
            _ => None,
        };
        if let Some((s, e, used)) = relative {
            out.range = Some(TimeRange {
                from: Some(s),
                to: Some(e),
            });
            out.phrase = words[i..i + used].join(" ");
            return out;
        }
        // "3 days ago", "two weeks ago"
        if let Some(n) = count_of(w)
            && let Some(unit) = next.and_then(unit_days)
            && words.get(i + 2).map(String::as_str) == Some("ago")
        {
            let back = today - n * unit;
            // The day (or span) that far back, give or take half a unit.
            let slack = (unit / 2).max(1);
            out.range = Some(TimeRange {
                from: Some((back - slack) * DAY),
                to: Some((back + slack + 1) * DAY),
            });
            out.phrase = words[i..i + 3].join(" ");
            return out;
        }
        // "before June 2023", "after March", "since 2022-05-01", "in May 2023",
        // "on October 24, 2023", "during 2010"
        let (prep, at) = match w {
            "before" | "until" | "till" | "after" | "since" | "in" | "on" | "during" | "of"
            | "by" => (Some(w), i + 1),
            _ => (None, i),
        };
        if let Some((s, e, used)) = date_at(&words, at, now)
            // A bare month or year needs a preposition ("may" and "march"
            // are verbs too, 2048 is a number): an ISO date or a month with
            // its year or day stands alone.
            && (prep.is_some() || used > 1 || iso_date(&words[at]).is_some())
        {
            let range = match prep {
                Some("before" | "until" | "till" | "by") => TimeRange {
                    from: None,
                    to: Some(if prep == Some("before") { s } else { e }),
                },
                Some("after") => TimeRange {
                    from: Some(e),
                    to: None,
                },
                Some("since") => TimeRange {
                    from: Some(s),
                    to: None,
                },
                _ => TimeRange {
                    from: Some(s),
                    to: Some(e),
                },
            };
            out.range = Some(range);
            out.phrase = words[i..at + used].join(" ");
            return out;
        }
        i += 1;
    }
    out
}

fn count_of(word: &str) -> Option<i64> {
    const NUMBERS: [&str; 10] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    if word == "a" || word == "an" {
        return Some(1);
    }
    if let Some(i) = NUMBERS.iter().position(|n| *n == word) {
        return Some(i as i64 + 1);
    }
    word.parse::<i64>().ok().filter(|n| (1..=1000).contains(n))
}

fn unit_days(word: &str) -> Option<i64> {
    match word.trim_end_matches('s') {
        "day" => Some(1),
        "week" => Some(7),
        "month" => Some(30),
        "year" => Some(365),
        _ => None,
    }
}

fn order_of(words: &[String]) -> Option<TimeOrder> {
    let has = |w: &str| words.iter().any(|x| x == w);
    let pair = |a: &str, b: &str| words.windows(2).any(|p| p[0] == a && p[1] == b);
    if has("latest")
        || has("newest")
        || has("currently")
        || has("nowadays")
        || pair("most", "recent")
        || pair("most", "recently")
        || pair("right", "now")
        || pair("now", "use")
        || pair("still", "use")
        || pair("we", "now")
    {
        Some(TimeOrder::Newest)
    } else if has("originally")
        || has("initially")
        || has("earliest")
        || pair("at", "first")
        || pair("first", "time")
    {
        Some(TimeOrder::Oldest)
    } else {
        None
    }
}

/// The first date a text states (`Date: 1:56 pm on 8 May, 2023`, "8 May,
/// 2023", "October 24, 2023", "2023-05-08", "March 2023"), as the start of
/// that day (or month), Unix seconds. A month or day without a year is not
/// a date here: nothing would place it.
pub fn date_in(text: &str) -> Option<i64> {
    let words = words_of(text);
    for i in 0..words.len() {
        if let Some((s, _, used)) = date_at(&words, i, 0) {
            let w = &words[i];
            let named_year = iso_date(w).is_some()
                || year_of(w).is_none() && words[i..i + used].iter().any(|x| year_of(x).is_some());
            if named_year {
                return Some(s);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-26 12:00 UTC, a Thursday.
    const NOW: i64 = 1_795_694_400;

    fn day(y: i64, m: u32, d: u32) -> i64 {
        days_from_civil(y, m, d) * DAY
    }

    #[test]
    fn civil_days_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for z in [-1000, 0, 59, 60, 11_016, 19_000, 20_783] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(civil_from_days(NOW / DAY), (2026, 11, 26));
    }

    #[test]
    fn relative_words() {
        let q = read_query("what did we decide yesterday", NOW);
        assert_eq!(q.range.unwrap().from, Some(day(2026, 11, 25)));
        assert_eq!(q.phrase, "yesterday");
        let q = read_query("what changed last week?", NOW);
        let r = q.range.unwrap();
        // The Monday-to-Sunday week before this one.
        assert_eq!(
            (r.from, r.to),
            (Some(day(2026, 11, 16)), Some(day(2026, 11, 23)))
        );
        let q = read_query("notes from last month", NOW);
        let r = q.range.unwrap();
        assert_eq!(
            (r.from, r.to),
            (Some(day(2026, 10, 1)), Some(day(2026, 11, 1)))
        );
        let q = read_query("what broke 3 days ago", NOW);
        assert!(q.range.unwrap().contains(day(2026, 11, 23) + 5));
        assert_eq!(q.phrase, "3 days ago");
    }

    #[test]
    fn named_dates_and_prepositions() {
        let q = read_query("Which hobby did Sam take up in May 2023?", NOW);
        let r = q.range.unwrap();
        assert_eq!(
            (r.from, r.to),
            (Some(day(2023, 5, 1)), Some(day(2023, 6, 1)))
        );
        assert_eq!(q.phrase, "in may 2023");
        let q = read_query("What did Audrey eat for dinner on October 24, 2023?", NOW);
        let r = q.range.unwrap();
        assert_eq!(
            (r.from, r.to),
            (Some(day(2023, 10, 24)), Some(day(2023, 10, 25)))
        );
        let q = read_query("which cache did we use before June 2023", NOW);
        let r = q.range.unwrap();
        assert_eq!((r.from, r.to), (None, Some(day(2023, 6, 1))));
        let q = read_query("what happened since 2025-02-03", NOW);
        assert_eq!(q.range.unwrap().from, Some(day(2025, 2, 3)));
        // A month with no year: its latest occurrence (March → March 2026;
        // December → December 2025).
        let q = read_query("what did we decide in March", NOW);
        assert_eq!(q.range.unwrap().from, Some(day(2026, 3, 1)));
        let q = read_query("what did we decide in December", NOW);
        assert_eq!(q.range.unwrap().from, Some(day(2025, 12, 1)));
        let q = read_query(
            "Which country were Jolene and her mother visiting in 2010?",
            NOW,
        );
        assert_eq!(q.range.unwrap().from, Some(day(2010, 1, 1)));
    }

    #[test]
    fn words_that_are_not_times() {
        for q in [
            "how does the parser decide what to skip",
            "you may march on",
            "may I use the cache",
            "the 404 handler",
            "what is the first argument",
            "why is the buffer 2048 bytes",
        ] {
            assert_eq!(read_query(q, NOW).range, None, "{q}");
        }
    }

    #[test]
    fn order_words() {
        assert_eq!(
            read_query("what is the latest decision on caching", NOW).order,
            Some(TimeOrder::Newest)
        );
        assert_eq!(
            read_query("which database did we originally use", NOW).order,
            Some(TimeOrder::Oldest)
        );
        assert_eq!(read_query("how does caching work", NOW).order, None);
    }

    #[test]
    fn dates_stated_in_text() {
        assert_eq!(
            date_in("conv-26 session 1: Caroline and Melanie, 1:56 pm on 8 May, 2023"),
            Some(day(2023, 5, 8))
        );
        assert_eq!(
            date_in("Released October 24, 2023."),
            Some(day(2023, 10, 24))
        );
        assert_eq!(
            date_in("decided 2024-03-02 in review"),
            Some(day(2024, 3, 2))
        );
        assert_eq!(date_in("# Release 1.2 (March 2023)"), Some(day(2023, 3, 1)));
        assert_eq!(date_in("we may revisit this in March"), None);
        assert_eq!(date_in("port 8080, 2023 lines"), None);
    }

    #[test]
    fn ranges_measure_distance() {
        let r = TimeRange {
            from: Some(day(2023, 5, 1)),
            to: Some(day(2023, 6, 1)),
        };
        assert_eq!(r.days_away(day(2023, 5, 10)), 0);
        assert_eq!(r.days_away(day(2023, 4, 30)), 1);
        assert_eq!(r.days_away(day(2023, 6, 1)), 1);
        assert_eq!(r.days_away(day(2023, 6, 10)), 10);
    }
}
