// Time zone names: whether this runtime knows one (IANA names such as "Europe/Berlin", and "UTC"). Settings check
// `code.timezone` with it; job schedules are read in that zone (src/code/cron.ts).

/** Whether a time zone name is one this runtime knows. */
export function isTimeZone(name: string): boolean {
  if (name === "") return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
