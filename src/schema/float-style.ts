// How a database's SQLite writes floats as JSON text: with the shortest digits that read back exactly (3.47 and
// later) or only 15 (a libSQL server on 3.45), in which case renderings ask printf for 17 (json-sql.ts).

import type { Client } from "@libsql/core/api";
import type { FloatStyle } from "./json-sql.ts";

export async function detectFloatStyle(db: Pick<Client, "execute">): Promise<FloatStyle> {
  const rs = await db.execute(`SELECT json_quote(0.1 + 0.2) AS j`);
  return rs.rows[0]?.j === JSON.stringify(0.1 + 0.2) ? "native" : "digits17";
}
