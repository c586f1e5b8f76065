// Types of console-page.js (browser-side code of the console benchmark).
export function timeInPage(args: readonly [string, string]): Promise<number>;
