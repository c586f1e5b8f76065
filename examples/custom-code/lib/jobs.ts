// The example's job: every night at 03:00 (in the setting code.timezone) remove the todos that were done more than
// 30 days ago.
/// <reference path="../../../sandbox/burrow.d.ts" />

const DAY_MS = 24 * 60 * 60 * 1000;

export const jobs: Burrow.JobDefinition[] = [
  {
    name: "nightly_cleanup",
    schedule: "0 3 * * *",
    timeoutMs: 10 * 60 * 1000,
    async run(job, { data, log }) {
      const removed = await data.deleteWhere("todo", { where: { done: true, lastmoddate: { lt: Date.now() - 30 * DAY_MS } } });
      log.info(`${job.name} (${job.trigger}): ${removed} done todo(s) older than 30 days removed`);
    },
  },
];
