// Job schedules (src/code/cron.ts): the standard vectors (every minute, steps, ranges, lists, month and weekday
// names, the aliases, day-of-month OR day-of-week), the refused ones with their messages, daylight-saving changes
// in zones that have them (a fixed-time job runs once; a job stepping through a repeated hour runs at each of its
// minutes), and how the scheduler finds the newest occurrences of a long gap (src/code/job-scheduler.ts).

import { describe, expect, test } from "bun:test";
import { parseSchedule } from "../../src/code/cron.ts";
import { occurrencesIn } from "../../src/code/job-scheduler.ts";

const at = (iso: string) => Date.parse(iso);
const runs = (expression: string, after: string, n = 4, zone = "UTC") =>
  parseSchedule(expression, zone)
    .nextRuns(n, at(after))
    .map((ms) => new Date(ms).toISOString());
/** Wall-clock times in a zone: "2026-03-29 03:00". */
const local = (zone: string, list: string[]) =>
  list.map((iso) =>
    new Intl.DateTimeFormat("sv-SE", { timeZone: zone, dateStyle: "short", timeStyle: "short", hourCycle: "h23" }).format(new Date(iso)),
  );

describe("standard vectors (UTC)", () => {
  test("every minute, strictly after the given time", () => {
    expect(runs("* * * * *", "2026-01-01T00:00:30Z", 3)).toEqual([
      "2026-01-01T00:01:00.000Z",
      "2026-01-01T00:02:00.000Z",
      "2026-01-01T00:03:00.000Z",
    ]);
    expect(runs("* * * * *", "2026-01-01T00:01:00Z", 1)).toEqual(["2026-01-01T00:02:00.000Z"]);
  });

  test("steps, ranges, stepped ranges and lists", () => {
    expect(runs("*/15 * * * *", "2026-01-01T10:05:00Z")).toEqual(
      ["10:15", "10:30", "10:45", "11:00"].map((t) => `2026-01-01T${t}:00.000Z`),
    );
    expect(runs("0 9-11 * * *", "2026-01-01T09:30:00Z")).toEqual([
      "2026-01-01T10:00:00.000Z",
      "2026-01-01T11:00:00.000Z",
      "2026-01-02T09:00:00.000Z",
      "2026-01-02T10:00:00.000Z",
    ]);
    expect(runs("0 8-18/4 * * *", "2026-01-01T00:00:00Z", 4)).toEqual(
      ["08", "12", "16"].map((h) => `2026-01-01T${h}:00:00.000Z`).concat("2026-01-02T08:00:00.000Z"),
    );
    expect(runs("0 0 1,15 * *", "2026-01-01T00:00:00Z", 3)).toEqual([
      "2026-01-15T00:00:00.000Z",
      "2026-02-01T00:00:00.000Z",
      "2026-02-15T00:00:00.000Z",
    ]);
    expect(runs("5,35 */6 * * *", "2026-01-01T00:00:00Z", 3)).toEqual([
      "2026-01-01T00:05:00.000Z",
      "2026-01-01T00:35:00.000Z",
      "2026-01-01T06:05:00.000Z",
    ]);
  });

  test("month and weekday names; Sunday is 0 or 7", () => {
    // 2026-01-02 is a Friday.
    expect(runs("0 9 * * MON-FRI", "2026-01-02T12:00:00Z", 3)).toEqual([
      "2026-01-05T09:00:00.000Z",
      "2026-01-06T09:00:00.000Z",
      "2026-01-07T09:00:00.000Z",
    ]);
    expect(runs("0 0 1 JAN *", "2026-01-01T00:00:00Z", 2)).toEqual(["2027-01-01T00:00:00.000Z", "2028-01-01T00:00:00.000Z"]);
    expect(runs("0 12 * JAN-MAR sat", "2026-03-25T00:00:00Z", 2)).toEqual(["2026-03-28T12:00:00.000Z", "2027-01-02T12:00:00.000Z"]);
    expect(runs("0 0 * * 0", "2026-01-01T00:00:00Z", 2)).toEqual(runs("0 0 * * 7", "2026-01-01T00:00:00Z", 2));
    expect(runs("0 0 * * SUN", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-04T00:00:00.000Z"]);
  });

  test("the aliases", () => {
    const from = "2026-01-01T10:20:00Z";
    expect(runs("@hourly", from, 2)).toEqual(["2026-01-01T11:00:00.000Z", "2026-01-01T12:00:00.000Z"]);
    expect(runs("@daily", from, 2)).toEqual(["2026-01-02T00:00:00.000Z", "2026-01-03T00:00:00.000Z"]);
    expect(runs("@midnight", from, 1)).toEqual(["2026-01-02T00:00:00.000Z"]);
    expect(runs("@weekly", from, 2)).toEqual(["2026-01-04T00:00:00.000Z", "2026-01-11T00:00:00.000Z"]);
    expect(runs("@monthly", from, 2)).toEqual(["2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"]);
    expect(runs("@yearly", from, 1)).toEqual(["2027-01-01T00:00:00.000Z"]);
    expect(runs("@annually", from, 1)).toEqual(["2027-01-01T00:00:00.000Z"]);
    expect(runs("@HOURLY", from, 1)).toEqual(["2026-01-01T11:00:00.000Z"]);
  });

  test("a day of month and a day of week: either one (as Vixie cron)", () => {
    // Fridays, and the 13th (a Tuesday in January 2026).
    expect(runs("0 0 13 * FRI", "2026-01-01T00:00:00Z", 4)).toEqual([
      "2026-01-02T00:00:00.000Z",
      "2026-01-09T00:00:00.000Z",
      "2026-01-13T00:00:00.000Z",
      "2026-01-16T00:00:00.000Z",
    ]);
    // With either field "*", only the other one counts.
    expect(runs("0 0 13 * *", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-01-13T00:00:00.000Z", "2026-02-13T00:00:00.000Z"]);
  });

  test("spaces around and between fields do not matter; the expression keeps one space between fields", () => {
    const s = parseSchedule("  0   3 * *  * ");
    expect([s.expression, s.timezone, new Date(s.next(at("2026-01-01T00:00:00Z"))!).toISOString()]).toEqual([
      "0 3 * * *",
      "UTC",
      "2026-01-01T03:00:00.000Z",
    ]);
  });
});

describe("refused", () => {
  test("each with a message naming what is wrong", () => {
    const cases: [string, string][] = [
      ["", "five fields are needed (minute hour day-of-month month day-of-week)"],
      ["* * * *", "five fields are needed (minute hour day-of-month month day-of-week)"],
      ["0 * * * * *", "five fields are needed (minute hour day-of-month month day-of-week)"],
      ["@every", "the aliases are @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"],
      ["@reboot", "the aliases are @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"],
      ["61 * * * *", "the minute 61 is out of range (0-59)"],
      ["0 24 * * *", "the hour 24 is out of range (0-23)"],
      ["0 0 32 * *", "the day of month 32 is out of range (1-31)"],
      ["0 0 0 * *", "the day of month 0 is out of range (1-31)"],
      ["0 0 * 13 *", "the month 13 is out of range (1-12)"],
      ["0 0 * * 8", "the day of week 8 is out of range (0-7)"],
      ["5-1 * * * *", "From value is larger than to value: '5-1'"],
      ["*/0 * * * *", "Syntax error, illegal stepping: 0"],
      ["a b c d e", "configuration entry 1 (a) contains illegal characters."],
    ];
    for (const [expression, message] of cases) {
      let error = "";
      try {
        parseSchedule(expression);
      } catch (e) {
        error = (e as Error).message;
      }
      expect(error).toBe(`"${expression}" is not a schedule: ${message}`);
    }
  });

  test("a time zone this runtime does not know", () => {
    expect(() => parseSchedule("0 3 * * *", "Mars/Olympus")).toThrow(
      '"Mars/Olympus" is not a time zone (an IANA name such as "Europe/Berlin", or "UTC")',
    );
    expect(() => parseSchedule("0 3 * * *", "")).toThrow("is not a time zone");
  });
});

describe("daylight-saving changes", () => {
  test("Europe/Berlin springs forward on 2026-03-29: a 02:30 job runs once that day, at 03:00", () => {
    const list = runs("30 2 * * *", "2026-03-27T12:00:00Z", 4, "Europe/Berlin");
    expect(list).toEqual(["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z", "2026-03-31T00:30:00.000Z"]);
    expect(local("Europe/Berlin", list)).toEqual(["2026-03-28 02:30", "2026-03-29 03:00", "2026-03-30 02:30", "2026-03-31 02:30"]);
    // A job at 03:00 is not run twice for it.
    expect(local("Europe/Berlin", runs("0 3 * * *", "2026-03-28T12:00:00Z", 2, "Europe/Berlin"))).toEqual([
      "2026-03-29 03:00",
      "2026-03-30 03:00",
    ]);
  });

  test("America/New_York falls back on 2026-11-01: a 01:30 job runs once, in the first 01:30", () => {
    const list = runs("30 1 * * *", "2026-10-31T12:00:00Z", 3, "America/New_York");
    expect(list).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z", "2026-11-03T06:30:00.000Z"]);
    expect(local("America/New_York", list)).toEqual(["2026-11-01 01:30", "2026-11-02 01:30", "2026-11-03 01:30"]);
  });

  test("a */30 job runs at each half hour of the repeated hour (every 30 minutes of real time)", () => {
    const list = runs("*/30 * * * *", "2026-11-01T04:00:00Z", 6, "America/New_York");
    expect(list).toEqual(["04:30", "05:00", "05:30", "06:00", "06:30", "07:00"].map((t) => `2026-11-01T${t}:00.000Z`));
    expect(local("America/New_York", list)).toEqual(["00:30", "01:00", "01:30", "01:00", "01:30", "02:00"].map((t) => `2026-11-01 ${t}`));
  });

  test("the same expression in two zones runs at their own wall-clock times", () => {
    expect(runs("0 9 * * *", "2026-07-01T00:00:00Z", 1, "Asia/Tokyo")).toEqual(["2026-07-02T00:00:00.000Z"]);
    expect(runs("0 9 * * *", "2026-07-01T00:00:00Z", 1, "America/New_York")).toEqual(["2026-07-01T13:00:00.000Z"]);
  });
});

describe("the occurrences of a gap (what the scheduler records after a stop)", () => {
  const minute = parseSchedule("* * * * *");
  test("a short gap: every occurrence, oldest first", () => {
    expect(occurrencesIn(minute, at("2026-01-01T00:00:30Z"), at("2026-01-01T00:03:00Z"), 10)).toEqual({
      newest: [at("2026-01-01T00:01:00Z"), at("2026-01-01T00:02:00Z"), at("2026-01-01T00:03:00Z")],
      earlier: 0,
      exact: true,
    });
    expect(occurrencesIn(minute, at("2026-01-01T00:01:00Z"), at("2026-01-01T00:01:59Z"), 10).newest).toEqual([]);
  });

  test("a long gap: the newest few and a count of the others (exact while it is cheap to know)", () => {
    const day = occurrencesIn(minute, at("2026-01-01T00:00:00Z"), at("2026-01-02T00:00:00Z"), 3);
    expect(day.newest).toEqual([at("2026-01-01T23:58:00Z"), at("2026-01-01T23:59:00Z"), at("2026-01-02T00:00:00Z")]);
    expect([day.earlier, day.exact]).toEqual([1437, true]);
    const hourly = occurrencesIn(parseSchedule("@hourly"), at("2026-01-01T00:00:00Z"), at("2026-01-03T00:30:00Z"), 3);
    expect(hourly).toEqual({
      newest: [at("2026-01-02T22:00:00Z"), at("2026-01-02T23:00:00Z"), at("2026-01-03T00:00:00Z")],
      earlier: 45,
      exact: true,
    });
    // A year of minutes is not walked: the newest are found, the rest reported as at least some.
    const started = performance.now();
    const year = occurrencesIn(minute, at("2025-01-01T00:00:00Z"), at("2026-01-01T00:00:30Z"), 3);
    expect([year.newest.at(-1), year.exact]).toEqual([at("2026-01-01T00:00:00Z"), false]);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
