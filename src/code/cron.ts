// Job schedules: five-field cron expressions (minute hour day-of-month month day-of-week, with the usual ranges,
// lists, steps and names) and the aliases @yearly @annually @monthly @weekly @daily @midnight @hourly, read in a
// time zone. Parsing and the next occurrences are the croner library's (pinned); this file only fixes the dialect
// (five fields, day-of-month OR day-of-week as in Vixie cron) and turns its errors into one clear message.
// Across a daylight-saving change a fixed-time job (a single minute and hour) runs once: in a skipped hour at the
// first minute after the gap, in a repeated hour at its first occurrence; a job stepping through the hour runs
// at every minute that exists.

import { Cron } from "croner";
import { isTimeZone } from "../time-zone.ts";

export interface Schedule {
  /** The expression as written. */
  expression: string;
  timezone: string;
  /** The first occurrence strictly after `after` (ms since 1970), or null when there is none. */
  next(after: number): number | null;
  /** Up to `n` occurrences strictly after `after`. */
  nextRuns(n: number, after: number): number[];
}

/** Fields as croner names them in its range errors: what a reader calls them, their range, croner's offset. */
const FIELDS: Record<string, [string, number, number, number]> = {
  minute: ["minute", 0, 59, 0],
  hour: ["hour", 0, 23, 0],
  day: ["day of month", 1, 31, 1],
  month: ["month", 1, 12, 1],
  dayOfWeek: ["day of week", 0, 7, 0],
};

/** croner's message without its prefix; a value out of range as written (croner counts days and months from 0). */
function reason(message: string): string {
  const why = message.replace(/^CronPattern: /, "");
  const m = /^Invalid value for (\w+): (-?\d+)$/.exec(why);
  const field = m ? FIELDS[m[1]!] : undefined;
  if (!m || !field) return why;
  const [name, low, high, offset] = field;
  return `the ${name} ${Number(m[2]) + offset} is out of range (${low}-${high})`;
}

const ALIASES = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]);

/** A schedule from a cron expression in a time zone; throws Error with a message naming what is wrong. */
export function parseSchedule(expression: string, timezone = "UTC"): Schedule {
  const text = expression.trim().replace(/\s+/g, " ");
  if (!isTimeZone(timezone)) throw new Error(`"${timezone}" is not a time zone (an IANA name such as "Europe/Berlin", or "UTC")`);
  if (text.startsWith("@") && !ALIASES.has(text.toLowerCase()))
    throw new Error(`"${expression}" is not a schedule: the aliases are ${[...ALIASES].join(", ")}`);
  if (!text.startsWith("@") && text.split(" ").length !== 5)
    throw new Error(`"${expression}" is not a schedule: five fields are needed (minute hour day-of-month month day-of-week)`);
  let cron: Cron;
  try {
    cron = new Cron(text.toLowerCase().startsWith("@") ? text.toLowerCase() : text, {
      timezone,
      mode: "5-part",
      paused: true,
      domAndDow: false,
    });
  } catch (e) {
    throw new Error(`"${expression}" is not a schedule: ${reason(String((e as Error)?.message ?? e))}`);
  }
  const next = (after: number): number | null => cron.nextRun(new Date(after))?.getTime() ?? null;
  return {
    expression: text,
    timezone,
    next,
    nextRuns: (n, after) => cron.nextRuns(n, new Date(after)).map((d) => d.getTime()),
  };
}
