// Nested upsert: POST /<schema> with X-Service-Relations, up to 3 levels, one transaction.

import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
const relations = "author=member&comments=comment&comments.by=member&author.company=company";
beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/company", { fields: { name: { type: "string" } } });
  await t.admin("PUT", "/schemas/member", { fields: { name: { type: "string" }, company: { type: "relationship", schema: "company" } } });
  await t.admin("PUT", "/schemas/comment", { fields: { text: { type: "string" }, by: { type: "relationship", schema: "member" } } });
  await t.admin("PUT", "/schemas/post", {
    fields: {
      title: { type: "string" },
      author: { type: "relationship", schema: "member" },
      comments: { type: "relationship", schema: "comment", many: true },
    },
  });
});
afterAll(() => t.close());

const count = async (schema: string) => (await t.request("GET", `/${schema}`)).body.length;

describe("upsert", () => {
  test("creates nested objects up to 3 levels and answers the parent with them in place", async () => {
    const r = await t.request("POST", "/post", {
      headers: { "x-service-relations": relations },
      body: {
        post_id: "p1",
        title: "Hello",
        author: { member_id: "m1", name: "Ann", company: { company_id: "acme", name: "Acme" } },
        comments: [{ comment_id: "k1", text: "hi", by: { member_id: "m2", name: "Bob" } }, "k-existing"],
      },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      post_id: "p1",
      title: "Hello",
      author: { member_id: "m1", name: "Ann", company: { company_id: "acme", name: "Acme" } },
    });
    expect(r.body.comments[0]).toMatchObject({ comment_id: "k1", text: "hi", by: { member_id: "m2", name: "Bob" } });
    expect(r.body.comments[1]).toBe("k-existing");
    const stored = (await t.request("GET", "/post/p1")).body;
    expect(stored.author).toBe("m1");
    expect(stored.comments).toEqual(["k1", "k-existing"]);
    expect((await t.request("GET", "/member/m1")).body.company).toBe("acme");
  });

  test("an object upserted in the same millisecond it was created still answers 200 (it existed)", async () => {
    setSystemTime(new Date(Date.now()));
    try {
      const body = { post_id: "same-ms", title: "first", comments: [{ comment_id: "same-ms-comment", text: "c" }] };
      const first = await t.request("POST", "/post", { headers: { "x-service-relations": relations }, body });
      const again = await t.request("POST", "/post", { headers: { "x-service-relations": relations }, body: { ...body, title: "second" } });
      expect([first.status, again.status]).toEqual([201, 200]);
      expect(again.body.title).toBe("second");
      expect(again.body.lastmoddate).toBeGreaterThan(again.body.createddate);
    } finally {
      setSystemTime();
    }
  });

  test("existing objects are updated, not duplicated; new ones get generated keys", async () => {
    const r = await t.request("POST", "/post", {
      headers: { "x-service-relations": relations },
      body: { post_id: "p1", title: "Hello again", author: { member_id: "m1", name: "Ann B" }, comments: [{ text: "new one" }] },
    });
    expect(r.status).toBe(200);
    expect((await t.request("GET", "/member/m1")).body).toMatchObject({ name: "Ann B", company: "acme" });
    const post = (await t.request("GET", "/post/p1")).body;
    expect(post.title).toBe("Hello again");
    expect(post.comments).toHaveLength(1);
    expect(post.comments[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(await count("member")).toBe(2);
  });

  test("an array body upserts each object", async () => {
    const r = await t.request("POST", "/post", {
      headers: { "x-service-relations": "author=member" },
      body: [
        { post_id: "p2", author: { member_id: "m3" } },
        { post_id: "p3", author: { member_id: "m1", name: "Ann C" } },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.map((p: any) => p.author.member_id)).toEqual(["m3", "m1"]);
  });

  test("one transaction: a bad value anywhere writes nothing", async () => {
    const before = [await count("post"), await count("member"), await count("comment"), await count("company")];
    const r = await t.request("POST", "/post", {
      headers: { "x-service-relations": relations },
      body: { post_id: "p9", author: { member_id: "m9", company: { company_id: "c9", name: 42 } }, comments: [{ text: "x" }] },
    });
    expect(r.status).toBe(400);
    expect([await count("post"), await count("member"), await count("comment"), await count("company")]).toEqual(before);
  });

  test("nested objects need the header, every nested field must be listed, and the header must be well formed", async () => {
    const body = { post_id: "p8", author: { member_id: "m8" } };
    const none = await t.request("POST", "/post", { body });
    expect(none.status).toBe(400);
    expect(none.body.error).toContain("X-Service-Relations");
    const unlisted = await t.request("POST", "/post", { headers: { "x-service-relations": "comments=comment" }, body });
    expect(unlisted.status).toBe(400);
    expect(unlisted.body.error).toContain("author");
    expect((await t.request("POST", "/post", { headers: { "x-service-relations": "author" }, body })).status).toBe(400);
    expect((await t.request("POST", "/post", { headers: { "x-service-relations": "author=company" }, body })).status).toBe(400);
    const deep = { post_id: "p7", author: { member_id: "m7", company: { company_id: "c7", owner: { x: 1 } } } };
    expect((await t.request("POST", "/post", { headers: { "x-service-relations": relations }, body: deep })).status).toBe(400);
    expect((await t.request("GET", "/post/p8")).status).toBe(404);
  });

  test("development inference creates relationship fields and schemas from the header", async () => {
    const r = await t.request("POST", "/album", {
      headers: { "x-service-relations": "cover=image&tracks=track" },
      body: { title: "A", cover: { url: "u" }, tracks: [{ n: 1 }, { n: 2 }] },
    });
    expect(r.status).toBe(201);
    const def = (await t.admin("GET", "/schemas/album")).body;
    expect(def.fields.cover).toEqual({ type: "relationship", schema: "image", many: false });
    expect(def.fields.tracks).toEqual({ type: "relationship", schema: "track", many: true });
    expect(r.body.tracks.map((x: any) => x.n)).toEqual([1, 2]);
    const expanded = (await t.request("GET", `/album/${r.body.album_id}`)).body;
    expect(expanded.tracks).toHaveLength(2);
  });
});
