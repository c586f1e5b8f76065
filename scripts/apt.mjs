// apt-get for the install-* scripts: as root directly, otherwise through `sudo -n` (never prompts).
// Installs only what is missing, refreshes the package lists once if the first attempt fails (a fresh machine has none).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** True when dpkg reports every package as installed. */
export function installed(packages) {
  try {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format syntax, not a template
    const out = execFileSync("dpkg-query", ["-W", "-f=${db:Status-Abbrev}\\n", ...packages], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return (
      out.trim().split("\n").length === packages.length &&
      out
        .trim()
        .split("\n")
        .every((l) => l.startsWith("ii"))
    );
  } catch {
    return false;
  }
}

/** apt-get install the packages that are missing; throws when apt-get fails. */
export function aptInstall(packages) {
  if (process.platform !== "linux") throw new Error("apt-get is Linux-only");
  if (installed(packages)) return;
  const apt = (args) =>
    execFileSync(isRoot ? "apt-get" : "sudo", isRoot ? args : ["-n", "apt-get", ...args], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  const install = ["install", "-y", "--no-install-recommends", ...packages];
  try {
    apt(install);
  } catch {
    apt(["update"]);
    apt(install);
  }
  if (!installed(packages)) throw new Error(`apt-get finished but ${packages.join(", ")} are not all installed`);
}

/**
 * The install-* scripts' one step: install `packages` unless every path in `needs` is there (an executable or a
 * file), check they are there afterwards, and print the first one; exits non-zero with `name`'s message otherwise.
 */
export function ensureInstalled(name, packages, needs) {
  const present = () => needs.every((p) => existsSync(p));
  if (!present()) {
    aptInstall(packages);
    if (!present()) {
      console.error(`${name}: apt-get finished but ${needs.filter((p) => !existsSync(p)).join(", ")} is missing`);
      process.exit(1);
    }
  }
  console.log(needs[0]);
}
