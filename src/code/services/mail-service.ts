// Custom code's `mail` service: send({to, subject, text, html}) through the Mailer (src/mail/mailer.ts), the path of
// the password-reset mail: the environment's SMTP server (settings smtp.*), or the outbox when no SMTP host is set.
// Each recipient counts against the setting code.mail.perHour of the environment, on the shared rate limiter (one
// count for every node). Arguments are checked here, each refusal naming the field (`mail.send: subject: ...`).

import type { RateLimiter } from "../../auth/rate-limit.ts";
import { ApiError, badRequest } from "../../errors.ts";
import { type Mailer, MAX_RECIPIENTS, type OutgoingMail, isMailAddress } from "../../mail/mailer.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";
import type { EnvName } from "../../request-context.ts";
import type { Settings } from "../../system/settings.ts";
import { absent, bad, got, member } from "./data-args.ts";

export const MAIL_OPS = ["send"] as const;

const KEYS = ["to", "subject", "text", "html"] as const;
const MAX_SUBJECT_CHARS = 998;
/** text and html together, UTF-8. */
export const MAX_MAIL_BODY_BYTES = 1024 * 1024;
const HOUR_MS = 3_600_000;
// Any control character but tab: a line break in a header would start a header of the caller's own.
const CONTROL_EXCEPT_TAB = /[\x00-\x08\x0a-\x1f\x7f]/;

export interface MailDeps {
  mailer: Pick<Mailer, "send">;
  /** The shared-state limiter (src/shared-state.ts): in memory on one node, in system.db for several. */
  limiter: RateLimiter;
  settings: Settings;
}

function address(path: string, v: unknown): string {
  if (!isMailAddress(v)) throw bad(path, `expected one plain e-mail address such as ann@example.com (no name, no list), got ${got(v)}`);
  return v;
}

function recipients(v: unknown): string[] {
  if (Array.isArray(v)) {
    if (v.length === 0) throw bad("to", "expected at least one recipient, got an empty array");
    if (v.length > MAX_RECIPIENTS) throw bad("to", `at most ${MAX_RECIPIENTS} recipients, got ${v.length}`);
    return v.map((x, i) => address(`to[${i}]`, x));
  }
  if (absent(v)) throw bad("to", `required (an e-mail address or an array of 1 to ${MAX_RECIPIENTS}), got ${got(v)}`);
  return [address("to", v)];
}

function optionalText(path: "text" | "html", v: unknown): string | undefined {
  if (absent(v)) return undefined;
  if (typeof v !== "string") throw bad(path, `expected a string, got ${got(v)}`);
  return v;
}

/** The guest's message as a Mail, or a refusal naming the field. Pure. */
export function mailMessage(v: unknown): OutgoingMail & { to: string[] } {
  if (!isObj(v)) throw badRequest(`the message must be an object {to, subject, text, html}, got ${got(v)}`);
  for (const k of Object.keys(v))
    if (!(KEYS as readonly string[]).includes(k)) throw bad(member(k).replace(/^\./, ""), `unknown property; expected ${KEYS.join(", ")}`);
  const to = recipients(v.to);
  const subject = v.subject;
  if (typeof subject !== "string")
    throw bad("subject", `required (a string of at most ${MAX_SUBJECT_CHARS} characters), got ${got(subject)}`);
  if (subject.length > MAX_SUBJECT_CHARS) throw bad("subject", `at most ${MAX_SUBJECT_CHARS} characters, got ${subject.length}`);
  if (CONTROL_EXCEPT_TAB.test(subject)) throw bad("subject", "must be one line, without line breaks or control characters");
  const text = optionalText("text", v.text);
  const html = optionalText("html", v.html);
  if (text === undefined && html === undefined) throw bad("text, html", "one of them is required (the body)");
  const bytes = Buffer.byteLength(text ?? "") + Buffer.byteLength(html ?? "");
  if (bytes > MAX_MAIL_BODY_BYTES) throw bad("text, html", `at most ${MAX_MAIL_BODY_BYTES} bytes together (UTF-8), got ${bytes}`);
  return { to, subject, text, html };
}

/** `mail.send(message)`: checked, counted (one per recipient), sent; answers the outbox id and how it went. */
export async function mailCall(deps: MailDeps, env: EnvName, op: string, args: unknown[]): Promise<{ id: string; via: string }> {
  if (op !== "send") throw badRequest(`mail has no operation "${op}"; operations: ${MAIL_OPS.join(", ")}`);
  try {
    if (args.length > 1) throw badRequest(`takes one argument (the message), got ${args.length}`);
    const mail = mailMessage(args[0]);
    const perHour = (deps.settings.get(env).code as { mail: { perHour: number } }).mail.perHour;
    const r = await deps.limiter.hit(`code-mail|${env}`, perHour, HOUR_MS, mail.to.length);
    if (!r.ok)
      throw new ApiError(
        429,
        `the limit of ${perHour} mails an hour in ${env} is reached (setting code.mail.perHour, one per recipient); try again in ${r.retryAfter} s`,
      );
    const sent = await deps.mailer.send(env, mail);
    return { id: sent.id, via: sent.via };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    throw new ApiError(e.status, `mail.send: ${e.message}`, { description: e.description, headers: e.headers, cause: e });
  }
}
