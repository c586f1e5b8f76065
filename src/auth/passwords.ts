// Password hashing: argon2id through Bun.password (runs off the main thread), and a dummy verify used so that
// unknown accounts take as long to reject as wrong passwords.

const ARGON2 = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;
let dummyHash: Promise<string> | null = null;

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, ARGON2);
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(password, hash);
  } catch {
    return false;
  }
}

/** Spend the time of one verification without an account (timing equalization). */
export async function verifyNothing(password: string): Promise<false> {
  dummyHash ??= hashPassword("burrow-timing-equalizer");
  await verifyPassword(password, await dummyHash);
  return false;
}
