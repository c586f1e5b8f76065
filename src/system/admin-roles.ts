// Admin roles and what each may do in the admin API, decided from the method and the path alone (no per-route
// code): owner does everything; editor everything but admin management, keys, settings, test mail and backup
// downloads; viewer only reads (GET/HEAD) outside those, plus logging out. A route added later is covered by these rules as is.

export const ROLES = ["owner", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(v: unknown): v is Role {
  return typeof v === "string" && (ROLES as readonly string[]).includes(v);
}

const RANK: Record<Role, number> = { viewer: 0, editor: 1, owner: 2 };

/** Paths (after /_admin/api) only an owner may use, with any method: who administers, the secrets, the mail. */
const OWNER_ONLY = ["/admins", "/keys", "/settings", "/mail/test"];
/** Paths only an owner may use though they sit under a path others may use: a backup's file holds the keys, settings and admins. */
const OWNER_ONLY_PATTERNS = [/^\/backups\/[^/]+\/download$/];
/** Reads an editor needs: the outbox holds users' temporary passwords, which would let a viewer sign in as them. */
const EDITOR_READS = ["/outbox"];
/** Writes every role may make: ending its own session. */
const ANY_ROLE_WRITES = ["POST /logout"];
const READS = new Set(["GET", "HEAD"]);

/** The path as the rules compare it: percent-escapes decoded, lowercase, no repeated or trailing slashes. */
function normalize(path: string): string {
  let p = path;
  try {
    p = decodeURIComponent(p);
  } catch {}
  p = p.toLowerCase().replace(/\/{2,}/g, "/").replace(/\/+$/, "");
  return p.startsWith("/") ? p : `/${p}`;
}

/** `path` is `prefix` or below it, segment-wise ("/keys/x" is under "/keys"; "/keysx" is not). */
const under = (path: string, prefix: string) => path === prefix || path.startsWith(prefix + "/");

/** The least role a request needs; `path` is the part after /_admin/api (a route pattern like "/admins/:id" works). */
export function neededRole(method: string, path: string): Role {
  const m = method.toUpperCase();
  const p = normalize(path);
  if (OWNER_ONLY.some((o) => under(p, o)) || OWNER_ONLY_PATTERNS.some((r) => r.test(p))) return "owner";
  if (READS.has(m)) return EDITOR_READS.some((e) => under(p, e)) ? "editor" : "viewer";
  if (ANY_ROLE_WRITES.includes(`${m} ${p}`)) return "viewer";
  return "editor";
}

/** Whether an admin of `role` may make the request, and if not, the role it needs. */
export function adminMayDo(role: Role, method: string, path: string): { ok: true } | { ok: false; need: Role } {
  const need = neededRole(method, path);
  return RANK[role] >= RANK[need] ? { ok: true } : { ok: false, need };
}

/** "an owner", "an editor", "a viewer". */
export function withArticle(role: Role): string {
  return `${role === "viewer" ? "a" : "an"} ${role}`;
}
