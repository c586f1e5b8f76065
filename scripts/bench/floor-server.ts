// The floor for point reads: a bare Bun.serve + bun:sqlite handler reading one row by key from the same
// table Burrow serves, with no framework, auth or content negotiation. Usage: bun floor-server.ts <db> <table> <key>

import { Database } from "bun:sqlite";

const [dbPath, table, key] = process.argv.slice(2);
const db = new Database(dbPath!, { readonly: true, strict: true });
const stmt = db.query(`SELECT * FROM "${table}" WHERE "${key}" = ?`);
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const url = req.url;
    const id = decodeURIComponent(url.slice(url.lastIndexOf("/") + 1));
    const row = stmt.get(id);
    return row ? Response.json(row) : new Response("not found", { status: 404 });
  },
});
console.log(`serving http://127.0.0.1:${server.port}`);
