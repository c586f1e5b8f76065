// What a provider says about the person behind a credential: the id that links them to a user, the name and
// email when the provider gives them, and the provider's own user object (what the user-info endpoints answer).

export interface SocialProfile {
  /** The provider's user id: the link key, and the default username. */
  id: string;
  name?: string;
  /** Only an address the provider vouches for (OpenID Connect: email_verified). */
  email?: string;
  /** The provider's user object as it answered. */
  info: Record<string, unknown>;
}

/** A provider refused the credential (bad, expired or revoked token, wrong signature). */
export const REFUSED = "refused" as const;
export type Refused = typeof REFUSED;

/** A provider's id member as a string: ids may come as numbers or strings (Twitter sends both). */
export function idString(v: unknown): string | null {
  if (typeof v === "string" && v.length > 0 && v.length <= 255) return v;
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return String(v);
  return null;
}
