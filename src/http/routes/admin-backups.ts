// Admin API routes for backups of the data directory (src/backup/): list them with the running one and the schedule,
// make one now, read one, download its file (owners only: it holds the keys and settings), delete one.

import { Elysia, t } from "elysia";
import { badRequest } from "../../errors.ts";
import { adminGuard } from "../admin-guard.ts";
import type { BodyParsers } from "../parsers.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";
import type { Burrow } from "../burrow.ts";
import type { BackupSettings } from "../../backup/backups.ts";
import { nextBackupAt } from "../../backup/schedule.ts";

const admin = (summary: string, description?: string) => ({ tags: ["admin"], summary, description, security: [{ adminBearer: [] }] });

const Backup = t.Object(
  {
    id: t.String({ description: "burrow-<UTC yyyymmddThhmmssZ>-<4 hex>" }),
    file: t.String({ description: "the file, relative to the data directory: backups/<id>.tar" }),
    size: t.Integer({ description: "bytes" }),
    created: t.Integer({ description: "the instant the backup holds, ms since 1970" }),
    durationMs: t.Union([t.Integer(), t.Null()], { description: "how long making it took (null for a file put there by hand)" }),
    s3: t.Optional(
      t.Object({ key: t.String(), error: t.Optional(t.String({ description: "the upload failed; the local file is kept" })) }),
    ),
  },
  { additionalProperties: false },
);
const BackupList = t.Object({
  backups: t.Array(Backup, { description: "newest first" }),
  running: t.Union([
    t.Object({ id: t.String(), progress: t.Union([t.Object({ done: t.Integer(), total: t.Integer(), phase: t.String() }), t.Null()]) }),
    t.Null(),
  ]),
  schedule: t.Object({
    every: t.Integer({ description: "hours; 0 = off" }),
    keep: t.Integer(),
    s3: t.Boolean(),
    next: t.Union([t.Integer(), t.Null()], { description: "when the next scheduled backup is due, ms since 1970" }),
  }),
});
const NewBackup = t.Optional(
  t.Object(
    { s3: t.Optional(t.Boolean({ description: "upload to the S3 file store (default: the setting backups.s3)" })) },
    { additionalProperties: false },
  ),
);
const IdParams = t.Object({ id: t.String({ description: "the backup's id" }) });

export function adminBackupRoutes(burrow: Burrow, parsers: BodyParsers) {
  const backups = burrow.backups;
  const schedule = () => {
    const s = burrow.settings.get("production").backups as unknown as BackupSettings;
    const newest = backups.list()[0]?.created ?? null;
    return { every: s.every, keep: s.keep, s3: s.s3, next: nextBackupAt(s, newest, Date.now()) };
  };
  return new Elysia({ name: "admin-backups", prefix: "/_admin/api" })
    .use(parsers)
    .use(adminGuard(burrow))
    .get("/backups", () => json({ backups: backups.list(), running: backups.running, schedule: schedule() }), {
      role: "viewer",
      detail: admin("Backups of the data directory, newest first, with the one being made and the schedule"),
      response: { 200: BackupList, ...S.errors(401, 403) },
    })
    .post(
      "/backups",
      async ({ body }) => {
        const b = (body ?? {}) as { s3?: unknown };
        if (typeof b !== "object" || b === null || Array.isArray(b)) throw badRequest('send {} or {"s3": true|false}');
        for (const k of Object.keys(b)) if (k !== "s3") throw badRequest(`unknown backup option "${k}" (only "s3")`);
        if (b.s3 !== undefined && typeof b.s3 !== "boolean") throw badRequest('"s3" must be true or false');
        return json(await backups.create({ s3: b.s3 as boolean | undefined }), 201);
      },
      {
        role: "editor",
        parse: "admin",
        body: NewBackup,
        detail: {
          ...admin(
            "Make a backup now (editors and owners)",
            "One tar file with system.db, development.db, production.db and the local files/, as they were at one instant, taken while the server serves. Answers when the file is complete; 409 while another backup is being made. Then only the newest backups.keep are kept.",
          ),
          ...S.jsonBody(NewBackup),
        },
        response: { 201: Backup, ...S.errors(400, 401, 403, 409, 500) },
      },
    )
    .get("/backups/:id", ({ params }) => json(backups.get(params.id)), {
      role: "viewer",
      params: IdParams,
      detail: admin("One backup"),
      response: { 200: Backup, ...S.errors(401, 403, 404) },
    })
    .get(
      "/backups/:id/download",
      ({ params }) => {
        const info = backups.get(params.id);
        return new Response(Bun.file(backups.path(params.id)), {
          headers: {
            "content-type": "application/x-tar",
            "content-length": String(info.size),
            "content-disposition": `attachment; filename="${info.id}.tar"`,
          },
        });
      },
      {
        role: "owner",
        params: IdParams,
        detail: admin(
          "Download a backup file (owners only: it holds the keys, settings and admins)",
          "application/x-tar; restore it with `burrow restore <file>`.",
        ),
        response: { 200: t.Any({ description: "the tar file" }), ...S.errors(401, 403, 404) },
      },
    )
    .delete(
      "/backups/:id",
      ({ params }) => {
        backups.remove(params.id);
        return json({});
      },
      {
        role: "editor",
        params: IdParams,
        detail: admin("Delete a backup file"),
        response: { 200: S.AnyObject, ...S.errors(401, 403, 404, 409) },
      },
    );
}
