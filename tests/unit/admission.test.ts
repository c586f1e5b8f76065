// Load shedding's decisions (src/http/admission.ts): which requests may be shed, how the admitted share follows the
// event loop's lag (a moment's lateness sheds nothing, sustained lateness shrinks the share, quiet brings it back within
// about 0.1 s) and that the share is applied evenly; the in-flight cap.

import { describe, expect, test } from "bun:test";
import { AdmissionState, TICK_MS, requestClass } from "../../src/http/admission.ts";

describe("which requests are kept", () => {
  test("admin, health, status, metrics, sign-in and tokens are never shed; data, users and code calls may be", () => {
    const kept = [
      "/_admin/api/login",
      "/_admin/",
      "/_health",
      "/_status",
      "/_status/figures",
      "/_metrics",
      "/user/accessToken",
      "/player/refreshToken",
      "/user/logout",
    ];
    const ordinary = [
      "/todo",
      "/todo/abc",
      "/user",
      "/user/ann",
      "/hello_world",
      "/_push/notifications",
      "/_files/development/x/y.png",
      "/_live/streams",
    ];
    expect(kept.map(requestClass)).toEqual(kept.map(() => "kept"));
    expect(ordinary.map(requestClass)).toEqual(ordinary.map(() => "ordinary"));
  });
});

describe("the admitted share", () => {
  const admitted = (s: AdmissionState, n: number, inFlight = 0) =>
    Array.from({ length: n }, () => s.admit(inFlight)).filter(Boolean).length;

  test("one late timer sheds nothing; sustained lag shrinks the share; quiet brings it back within ~0.1 s", () => {
    const s = new AdmissionState({ targetMs: 20, maxInFlight: 100 });
    s.tick(45); // descheduled once
    expect(s.fraction).toBe(1);
    for (let i = 0; i < 20; i++) s.tick(0);
    for (let i = 0; i < 10; i++) s.tick(60);
    expect(s.fraction).toBeLessThan(0.3);
    expect(s.fraction).toBeGreaterThanOrEqual(0.02);
    let ticks = 0;
    while (s.fraction < 1 && ticks < 1000) {
      s.tick(0);
      ticks++;
    }
    expect(ticks * TICK_MS).toBeLessThanOrEqual(150);
  });

  test("a share is applied evenly; every request while it is 1; none past the in-flight cap", () => {
    const s = new AdmissionState({ targetMs: 20, maxInFlight: 100 });
    expect(admitted(s, 1000)).toBe(1000);
    s.fraction = 0.25;
    expect(admitted(s, 1000)).toBe(250);
    s.fraction = 1;
    expect(admitted(s, 10, 100)).toBe(0);
    expect(admitted(s, 10, 99)).toBe(10);
  });

  test("the share never falls below 2%", () => {
    const s = new AdmissionState({ targetMs: 20, maxInFlight: 100 });
    for (let i = 0; i < 200; i++) s.tick(500);
    expect(s.fraction).toBe(0.02);
  });
});
