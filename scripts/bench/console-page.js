// The console benchmark's code that runs inside the page (scripts/bench/console.ts passes it to page.evaluate):
// do one action the way a user does, and measure with the Performance API from the action until the animation
// frame after the grid shows a new page (its data-page-seq attribute changes). Rejects on an error box or 30 s.

/** @param {readonly [string, string]} args action and its argument */
export async function timeInPage([act, a]) {
  if (act === "query") {
    // Typing comes before the timed click: the input's state is rendered first, as between keystrokes and a click.
    const input = document.querySelector('input[aria-label="Query string"]');
    input.value = a;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  }
  return new Promise((resolve, reject) => {
    const grid = () => document.querySelector("[role=grid]");
    const before = grid()?.dataset.pageSeq ?? "none";
    const t0 = performance.now();
    const click = (sel, text) => {
      const el = [...document.querySelectorAll(sel)].find((e) => text === undefined || e.textContent?.trim().startsWith(text));
      if (!el) throw new Error(`no ${sel} ${text ?? ""}`);
      el.click();
    };
    if (act === "open") location.hash = "#/data/wide";
    else if (act === "query") click("button", "Apply");
    else if (act === "next") click("button", "Next");
    else if (act === "sort") click("th", a);
    else if (act === "count") click("button", a);
    const deadline = t0 + 30_000;
    const check = () => {
      const seq = grid()?.dataset.pageSeq;
      const error = document.querySelector(".error");
      if (seq !== undefined && seq !== before) requestAnimationFrame(() => resolve(performance.now() - t0));
      else if (error) reject(new Error(`${act} ${a}: ${error.textContent}`));
      else if (performance.now() > deadline) reject(new Error(`${act} ${a}: no new page within 30 s`));
      else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  });
}
