// Scheduled backups: every `backups.every` hours (production's settings; 0 = off) a backup is made when the newest
// one is that old, then the newest `backups.keep` are kept. The clock and the timer are injectable, so a test can
// move time on and call tick() instead of waiting. With several nodes on one store, only the node holding the
// "backup" job lease looks (the lease is renewed at each look; a node that stops leaves it to another).

import type { Logger } from "../log.ts";
import type { BackupInfo, BackupSettings, Backups } from "./backups.ts";

/** How often the schedule looks whether a backup is due. */
const CHECK_MS = 60_000;
/** After a failed scheduled backup, the next try waits this long. */
const RETRY_MS = 15 * 60_000;
/** How long the backup lease lasts without being renewed (a backup can take longer than one look's interval). */
export const BACKUP_LEASE_MS = 30 * 60_000;

/** When the next scheduled backup is due (ms since 1970), or null when the schedule is off. Pure. */
export function nextBackupAt(s: Pick<BackupSettings, "every">, newest: number | null, now: number): number | null {
  if (!(s.every > 0)) return null;
  return newest === null ? now : newest + s.every * 3600_000;
}

export class BackupScheduler {
  #timer: Timer | undefined;
  #ticking = false;
  #failedAt = -Infinity;

  constructor(
    private readonly backups: Backups,
    private readonly settings: () => BackupSettings,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    /** Whether this node may make scheduled backups now (a job lease); absent: always. */
    private readonly lease?: () => Promise<boolean>,
  ) {}

  /** When the next backup is due, from the newest backup made (by the schedule or not). */
  next(): number | null {
    const newest = this.backups.list()[0]?.created ?? null;
    return nextBackupAt(this.settings(), newest, this.now());
  }

  /** Makes the backup if one is due (and none is running); answers it, or null. */
  async tick(): Promise<BackupInfo | null> {
    if (this.#ticking || this.backups.running) return null;
    this.#ticking = true;
    try {
      this.backups.cleanLeftovers(this.now());
      const due = this.next();
      if (due === null || due > this.now() || this.now() - this.#failedAt < RETRY_MS) return null;
      const info = await this.backups.create();
      this.log.info("scheduled backup made", {
        id: info.id,
        size: info.size,
        ms: info.durationMs ?? 0,
        ...(info.s3?.error ? { s3Error: info.s3.error } : {}),
      });
      return info;
    } catch (e) {
      this.#failedAt = this.now();
      this.log.warn("the scheduled backup failed", { error: (e as Error).message });
      return null;
    } finally {
      this.#ticking = false;
    }
  }

  start(intervalMs = CHECK_MS): () => void {
    const look = async () => {
      try {
        if (this.lease && !(await this.lease())) return;
      } catch (e) {
        this.log.warn("taking the backup lease failed", { error: String(e) });
        return;
      }
      await this.tick();
    };
    this.#timer = setInterval(() => void look(), intervalMs);
    this.#timer.unref?.();
    return () => clearInterval(this.#timer);
  }
}
