// The batch format between the main thread and the code threads: messages as JSON, payloads after a newline,
// unescaped. Round trips of awkward payloads (newlines, quotes, backslashes, surrogates, empty) with and without
// other messages between them, and batches flushed once per turn.

import { expect, test } from "bun:test";
import { batchedPoster, frame, unbatch } from "../../src/code/message-batch.ts";

test("messages with and without payloads come back as they were sent, in order", () => {
  const messages = [
    { type: "call", id: 1, payload: '{"a":"line\\nbreak","q":"\\"x\\""}' },
    { type: "drop", key: "k" },
    { type: "call", id: 2, payload: "" },
    { type: "result", id: 3, payload: 'raw\nnew line, tab\t, "quotes", back\\slash, emoji 😀, lone \ud800 surrogate' },
    { type: "service-result", sid: 4, ok: true, payload: undefined },
    { type: "call", id: 5, payload: "{}" },
  ];
  const text = frame(messages);
  expect(text.indexOf("\n")).toBe(
    JSON.stringify(messages.map((m) => ("payload" in m && m.payload !== undefined ? { ...m, payload: m.payload.length } : m))).length,
  );
  expect(unbatch(text)).toEqual(messages.map((m) => (m.payload === undefined ? (({ payload: _, ...rest }) => rest)(m) : m)) as never);
  expect(unbatch(frame([]))).toEqual([]);
});

test("a payload that looks like the framing cannot shift the next one", () => {
  const tricky = ['[{"type":"call","payload":3}]\nabc', "\n\n", '"', "x".repeat(100_000)];
  const sent = tricky.map((payload, id) => ({ id, payload }));
  expect(unbatch(frame(sent))).toEqual(sent);
});

test("everything posted in one turn goes out as one batch", async () => {
  const batches: string[] = [];
  const post = batchedPoster<{ id: number; payload?: string }>((b) => batches.push(b));
  post({ id: 1, payload: "one" });
  post({ id: 2 });
  post({ id: 3, payload: "three" });
  expect(batches).toEqual([]);
  await new Promise((r) => setImmediate(r));
  expect(batches.length).toBe(1);
  expect(unbatch(batches[0]!)).toEqual([{ id: 1, payload: "one" }, { id: 2 }, { id: 3, payload: "three" }]);
});
