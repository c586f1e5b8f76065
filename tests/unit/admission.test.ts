// Load shedding's decisions (src/http/admission.ts): which requests may be shed, how the admitted share follows the
// event loop's lag (a moment's lateness sheds nothing, sustained lateness shrinks the share, quiet brings it back within
// about 0.1 s) and that the share is applied evenly; the in-flight cap.

import { describe, expect, test } from "bun:test";
import { AdmissionState, FLOOD_TURN, TICK_MS, admissionControl, requestClass } from "../../src/http/admission.ts";
import type { SheddingFigures } from "../../src/system/operations.ts";

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
    // A stall of any length (a collection, a slow task), then the backlog it left taking one long turn: not an overload.
    for (const stall of [70, 85, 400]) {
      for (let i = 0; i < 5; i++) s.tick(1);
      s.tick(stall);
      s.tick(30);
      for (let i = 0; i < 3; i++) s.tick(1);
      expect(s.fraction).toBe(1);
    }
    for (let i = 0; i < 20; i++) s.tick(0);
    for (let i = 0; i < 10; i++) s.tick(60);
    expect(s.fraction).toBeLessThan(0.3);
    expect(s.lag).toBe(60);
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

describe("one long turn of the event loop", () => {
  const figures = (): SheddingFigures => ({ enabled: false, admitted: 0, shed: 0, admitFraction: 1, queueMs: 0, inFlight: 0 });
  /** `n` requests in one turn that has run `busyMs` past the timer's last look; how many were shed. */
  const turn = (busyMs: number, n: number) => {
    const f = figures();
    const control = admissionControl({ targetMs: 20, maxInFlight: 100_000 }, f);
    try {
      control.enter(new Request("http://x/note"), {}); // starts the timer: its last look is now
      const until = performance.now() + busyMs;
      while (performance.now() < until) {}
      let shed = 0;
      for (let i = 0; i < n; i++) if (control.enter(new Request("http://x/note"), {})?.status === 503) shed++;
      const kept = control.enter(new Request("http://x/_admin/api/status"), {});
      return { shed, kept: kept === null, figures: f };
    } finally {
      control.stop();
    }
  };

  test("a flood read in a turn past the target: beyond the first FLOOD_TURN requests the rest are refused", () => {
    const r = turn(40, FLOOD_TURN + 36);
    expect(r.shed).toBe(36);
    expect(r.kept).toBe(true);
    expect([r.figures.shed, r.figures.admitted]).toEqual([36, 1 + FLOOD_TURN + 1]);
  });

  test("a slow task with a few requests behind it (a steady moderate load) sheds nothing", () => {
    expect(turn(40, 12).shed).toBe(0);
  });

  test("a flood within the target sheds nothing", () => {
    expect(turn(0, 1000).shed).toBe(0);
  });
});
