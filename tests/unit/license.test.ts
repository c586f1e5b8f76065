// The repository's LICENSE matches the license package.json declares.

import { expect, test } from "bun:test";
import { join } from "node:path";

test("LICENSE is the MIT license that package.json names", async () => {
  const root = join(import.meta.dir, "../..");
  const pkg = await Bun.file(join(root, "package.json")).json();
  const text = await Bun.file(join(root, "LICENSE")).text();
  expect(pkg.license).toBe("MIT");
  expect(text.split("\n")[0]).toBe("MIT License");
  expect(text).toContain("Permission is hereby granted, free of charge");
});
