// What a backup file holds and how it is checked: the member names allowed (the three databases, the part of each
// one's WAL that belongs to the backup's instant as <name>-wal, and files/<key>),
// the manifest (manifest.json, the archive's last member) with every member's size and SHA-256, and the check of
// an archive's members against it. Pure functions: the backup worker writes, restore reads.

export const FORMAT = "burrow-backup";
export const FORMAT_VERSION = 1;
export const DATABASES = ["system.db", "development.db", "production.db"] as const;
export const MANIFEST = "manifest.json";

export interface ManifestMember {
  name: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT;
  formatVersion: number;
  id: string;
  /** When the databases were frozen (ms since 1970). */
  created: number;
  burrowVersion: string;
  members: ManifestMember[];
}

/** A backup's id doubles as its file name (`<id>.tar`): burrow-<UTC yyyymmddThhmmssZ>-<4 hex>. */
export const BACKUP_ID = /^burrow-\d{8}T\d{6}Z-[0-9a-f]{4}$/;

export function newBackupId(now: number, random = crypto.getRandomValues(new Uint8Array(2))): string {
  const iso = new Date(now).toISOString(); // 2026-11-23T21:12:03.123Z
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return `burrow-${stamp}-${Buffer.from(random).toString("hex").slice(0, 4)}`;
}

/** Member names a backup may hold: a database, its WAL, or a stored file under files/ (no `.`/`..` segments, no temp files). */
export function isMemberName(name: string): boolean {
  if ((DATABASES as readonly string[]).includes(name) || DATABASES.some((d) => name === `${d}-wal`) || name === MANIFEST) return true;
  if (!name.startsWith("files/") || name.length > 600) return false;
  const segs = name.slice(6).split("/");
  return (
    segs.length >= 1 &&
    segs.length <= 8 &&
    segs.every((s) => s !== "" && s !== "." && s !== ".." && !s.includes("\0") && !s.includes("\\") && !s.startsWith(".~"))
  );
}

export function parseManifest(text: string): Manifest {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    throw new Error("its manifest.json is not JSON");
  }
  const o = m as Partial<Manifest>;
  if (o?.format !== FORMAT) throw new Error("it is not a Burrow backup (manifest format)");
  if (o.formatVersion !== FORMAT_VERSION)
    throw new Error(`it is a backup of format version ${o.formatVersion}; this Burrow reads version ${FORMAT_VERSION}`);
  if (
    !Array.isArray(o.members) ||
    !o.members.every((x) => typeof x?.name === "string" && Number.isSafeInteger(x.size) && /^[0-9a-f]{64}$/.test(String(x.sha256)))
  )
    throw new Error("its manifest lists members without a name, size or SHA-256");
  return o as Manifest;
}

/**
 * Problems of an archive's members against its manifest: a member missing, extra, of another size or checksum,
 * a database missing, a name not allowed. Empty when the archive is whole.
 */
export function checkMembers(manifest: Manifest, read: readonly ManifestMember[]): string[] {
  const problems: string[] = [];
  const listed = new Map(manifest.members.map((m) => [m.name, m]));
  const seen = new Set<string>();
  for (const r of read) {
    if (r.name === MANIFEST) continue;
    if (!isMemberName(r.name)) problems.push(`member ${JSON.stringify(r.name)} is not allowed in a backup`);
    else if (seen.has(r.name)) problems.push(`member ${r.name} occurs twice`);
    seen.add(r.name);
    const m = listed.get(r.name);
    if (!m) problems.push(`member ${r.name} is not in the manifest`);
    else if (m.size !== r.size) problems.push(`member ${r.name} has ${r.size} bytes, the manifest says ${m.size}`);
    else if (m.sha256 !== r.sha256) problems.push(`member ${r.name} does not match its SHA-256 checksum (damaged)`);
  }
  for (const m of manifest.members) if (!seen.has(m.name)) problems.push(`member ${m.name} is missing`);
  for (const d of DATABASES) if (!listed.has(d)) problems.push(`the manifest lists no ${d}`);
  return problems;
}
