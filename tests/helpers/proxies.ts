// Caddy, HAProxy and nginx in front of a Burrow process, each a real process on loopback running the config shipped
// in deploy/ with only what a test must change swapped in: listen addresses (127.0.0.1, free ports), certificate
// paths (a self-signed certificate for the site's name; Caddy makes its own from its internal CA), and the upstream
// address. Every replacement must find its text, so a changed deploy file fails the test instead of going untested.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { generateKeyPairSync } from "node:crypto";
import { join } from "node:path";
import forge from "node-forge";
import { freePort, startLoopbackProcess, type LoopbackProcess } from "./loopback-process.ts";
import { rawExchange } from "./raw-http.ts";
import { ROOT } from "./spawn.ts";

/** The site name in the deploy files, which the tests keep (clients send it as SNI and Host). */
export const DOMAIN = "api.example.com";

export interface Proxy {
  name: string;
  /** Where the proxy takes TLS on loopback, and its plain HTTP redirect. */
  httpsPort: number;
  httpPort: number;
  /** The PEM that verifies the proxy's certificate for DOMAIN. */
  ca(): string;
  stop(): Promise<void>;
}

/** A self-signed certificate for `name` (its own trust anchor), with a native RSA key. */
export function selfSigned(name: string): { certPem: string; keyPem: string } {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = "01";
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const subject = [{ name: "commonName", value: name }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: true },
    { name: "subjectAltName", altNames: [{ type: 2, value: name }] },
  ]);
  cert.sign(key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

/** The deploy file `file` with each [text, replacement] applied (all occurrences); throws when a text is absent. */
function deployFile(file: string, edits: [string | RegExp, string][]): string {
  let text = readFileSync(join(ROOT, "deploy", file), "utf8");
  for (const [from, to] of edits) {
    const re = typeof from === "string" ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g") : from;
    if (!re.test(text)) throw new Error(`deploy/${file} no longer contains ${re}: update the test's edits`);
    re.lastIndex = 0;
    text = text.replace(re, to);
  }
  return text;
}

/** Resolves once the proxy answers GET /_health over TLS with 200. */
async function healthy(port: number, ca: string): Promise<boolean> {
  const r = await rawExchange(port, `GET /_health HTTP/1.1\r\nHost: ${DOMAIN}`, { tls: { ca, servername: DOMAIN } });
  return r.status === 200;
}

function proxy(name: string, p: LoopbackProcess, httpsPort: number, httpPort: number, ca: () => string): Proxy {
  return { name, httpsPort, httpPort, ca, stop: () => p.stop() };
}

/** deploy/Caddyfile with its internal CA instead of ACME and no admin endpoint. */
export async function startCaddy(bin: string, upstream: string): Promise<Proxy> {
  const httpPort = freePort();
  // Caddy's state (its CA, certificates, autosaved config) goes to XDG directories of its own.
  const state = mkdtempSync(join(tmpdir(), "burrow-caddy-state-"));
  const rootCa = join(state, "data/caddy/pki/authorities/local/root.crt");
  const p = await startLoopbackProcess({
    name: "caddy",
    argv: (port, dir) => {
      const global = `{\n\tadmin off\n\tlocal_certs\n\tskip_install_trust\n\thttp_port ${httpPort}\n\thttps_port ${port}\n}\n`;
      const site = deployFile("Caddyfile", [
        [`${DOMAIN} {\n`, `${DOMAIN} {\n\tbind 127.0.0.1\n`],
        ["reverse_proxy 127.0.0.1:8080", `reverse_proxy ${upstream}`],
      ]);
      writeFileSync(join(dir, "Caddyfile"), global + site);
      return [bin, "run", "--config", join(dir, "Caddyfile"), "--adapter", "caddyfile"];
    },
    env: { PATH: process.env.PATH, HOME: state, XDG_DATA_HOME: join(state, "data"), XDG_CONFIG_HOME: join(state, "config") },
    ready: async (url) => existsSync(rootCa) && (await healthy(Number(new URL(url).port), readFileSync(rootCa, "utf8"))),
  }).catch((e) => {
    rmSync(state, { recursive: true, force: true });
    throw e;
  });
  const stop = p.stop;
  p.stop = async () => {
    await stop();
    rmSync(state, { recursive: true, force: true });
  };
  return proxy("Caddy", p, Number(new URL(p.url).port), httpPort, () => readFileSync(rootCa, "utf8"));
}

/** deploy/haproxy.cfg in the foreground, without the privilege drop and chroot a service gets. */
export async function startHaproxy(bin: string, upstream: string, cert: { certPem: string; keyPem: string }): Promise<Proxy> {
  const httpPort = freePort();
  const p = await startLoopbackProcess({
    name: "haproxy",
    argv: (port, dir) => {
      writeFileSync(join(dir, "site.pem"), cert.certPem + cert.keyPem, { mode: 0o600 });
      const cfg = deployFile("haproxy.cfg", [
        [/^ +(user|group|chroot) .*\n/gm, ""],
        ["bind :80\n", `bind 127.0.0.1:${httpPort}\n`],
        [`bind :443 ssl crt /etc/haproxy/certs/${DOMAIN}.pem`, `bind 127.0.0.1:${port} ssl crt ${join(dir, "site.pem")}`],
        ["server burrow 127.0.0.1:8080", `server burrow ${upstream}`],
      ]);
      writeFileSync(join(dir, "haproxy.cfg"), cfg);
      return [bin, "-f", join(dir, "haproxy.cfg"), "-db"];
    },
    ready: async (url) => healthy(Number(new URL(url).port), cert.certPem),
  });
  return proxy("HAProxy", p, Number(new URL(p.url).port), httpPort, () => cert.certPem);
}

/** deploy/nginx.conf inside a minimal main config: one process, no daemon, everything in its temp directory. */
export async function startNginx(bin: string, upstream: string, cert: { certPem: string; keyPem: string }): Promise<Proxy> {
  const httpPort = freePort();
  const p = await startLoopbackProcess({
    name: "nginx",
    argv: (port, dir) => {
      writeFileSync(join(dir, "cert.pem"), cert.certPem);
      writeFileSync(join(dir, "key.pem"), cert.keyPem, { mode: 0o600 });
      const site = deployFile("nginx.conf", [
        [/^ +listen \[::\]:.*\n/gm, ""],
        ["listen 80;", `listen 127.0.0.1:${httpPort};`],
        ["listen 443 ssl http2;", `listen 127.0.0.1:${port} ssl http2;`],
        [`/etc/letsencrypt/live/${DOMAIN}/fullchain.pem`, join(dir, "cert.pem")],
        [`/etc/letsencrypt/live/${DOMAIN}/privkey.pem`, join(dir, "key.pem")],
        ["/etc/nginx/burrow-set-cookie.js", join(ROOT, "deploy/nginx-set-cookie.js")],
        ["server 127.0.0.1:8080;", `server ${upstream};`],
      ]);
      const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${join(dir, t)};\n`).join("");
      const main =
        `daemon off;\nmaster_process off;\npid ${join(dir, "nginx.pid")};\nerror_log stderr warn;\n` +
        `load_module /usr/lib/nginx/modules/ngx_http_js_module.so;\nevents {}\nhttp {\n  access_log off;\n${temp}${site}}\n`;
      writeFileSync(join(dir, "nginx.conf"), main);
      return [bin, "-p", dir, "-e", "stderr", "-c", join(dir, "nginx.conf")];
    },
    ready: async (url) => healthy(Number(new URL(url).port), cert.certPem),
  });
  return proxy("nginx", p, Number(new URL(p.url).port), httpPort, () => cert.certPem);
}
