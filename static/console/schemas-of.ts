// The schema definitions the data screens browse: development's, or those of production's newest version.

import { type Env, get } from "./api.ts";
import type { SchemaDef } from "./values.ts";

interface Deploy {
  version: number;
}

export async function schemasOf(env: Env): Promise<{ defs: SchemaDef[]; version: number | null }> {
  if (env === "development") return { defs: await get<SchemaDef[]>("/schemas"), version: 0 };
  const deploys = await get<Deploy[]>("/deploys");
  const version = deploys.length ? Math.max(...deploys.map((d) => d.version)) : null;
  if (version === null) return { defs: [], version: null };
  return { defs: await get<SchemaDef[]>(`/schemas?version=${version}`), version };
}
